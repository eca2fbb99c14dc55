%% bpspec's ERTS torture (docs/torture.md, docs/erts-findings/README.md): the engine torture's
%% pressure on a real node. Run by `bpspec oracle torture` (oracle/src/torture.rs):
%%
%%   erl +S N:N -noshell -pa DIR -eval 'bpspec_torture:main(Seconds, Seed, Workers)'
%%
%% Processes (workers) call, return from, raise from, yield inside, die inside and garbage
%% collect (large heaps: dirty schedulers) inside traced functions; one stager churns
%% trace_pattern true/false/pause/restart with call_count, call_time and call_memory; queriers
%% run trace_info call_time/call_memory/call_count/all back to back; on OTP 27+ a session
%% process creates sessions, traces in them and destroys them.
%%
%% What is checked (each a counter in the last line; any non-zero "bad_" counter is an
%% observable inconsistency):
%%  - conservation: stable_t (call_count + call_time) and stable_m (call_count + call_memory)
%%    are never touched by the stager; at the end every call the workers made to them is counted
%%    exactly once in call_count and in the call_time / call_memory rows' counts;
%%  - monotonicity: a querier's successive reads of stable_t's and stable_m's counts never go
%%    down;
%%  - shape: every call_time / call_memory list has each pid at most once, no negative figure;
%%  - paused counters (F1, docs/collection.md): after `pause`, a counter is read twice with no
%%    trace_pattern on it in between: a count that changes is `bad_paused_count`; a pid row that
%%    vanishes is `bad_paused_row_vanished`; a row that appears (count 0) and time that still
%%    grows are counted too (`paused_row_appeared`, `paused_time_grew`): both are frames in
%%    flight still charging the paused counter, the writes F1 says race with the in-place read.
%%
%% The known segfault (call_time + call_memory on one function called from a call_time-only
%% function, docs/erts-findings/otp29_call_time_memory_crash.erl) is kept out: even functions
%% only ever get call_time, odd ones only call_memory (call_count on any), in every session.
-module(bpspec_torture).
-export([main/3, main/4, stable_t/1, stable_m/1,
         f0/1, f1/1, f2/1, f3/1, f4/1, f5/1, f6/1, f7/1, f8/1, f9/1, f10/1, f11/1]).

-define(NF, 12).

f0(D) -> body(0, D).
f1(D) -> body(1, D).
f2(D) -> body(2, D).
f3(D) -> body(3, D).
f4(D) -> body(4, D).
f5(D) -> body(5, D).
f6(D) -> body(6, D).
f7(D) -> body(7, D).
f8(D) -> body(8, D).
f9(D) -> body(9, D).
f10(D) -> body(10, D).
f11(D) -> body(11, D).

stable_t(D) -> body(stable, D).
stable_m(D) -> body(stable, D).

%% The work inside a traced function: nested calls, yields, allocation, raises, deaths.
body(_, D) ->
    case rand:uniform(100) of
        R when R =< 4 -> dwell(20 + rand:uniform(200));
        R when R =< 30, D > 0 -> call_any(D - 1), call_any(D - 1), ok;
        R when R =< 45 -> erlang:yield(), ok;
        R when R =< 55 -> _ = lists:seq(1, 200), ok;
        R when R =< 56 -> big_gc();
        R when R =< 66 -> error(torture);
        R when R =< 67 -> die();
        R when R =< 75 -> receive after 0 -> ok end;
        _ -> ok
    end.

%% Stay inside the function across many schedule-outs (and migrations between schedulers):
%% frames in flight when the stager pauses the function.
dwell(0) -> ok;
dwell(N) -> erlang:yield(), dwell(N - 1).

%% A major collection of a large heap runs on a dirty CPU scheduler.
big_gc() ->
    L = lists:seq(1, 30000),
    erlang:garbage_collect(),
    length(L).

%% Leave the system from inside a traced function, after reporting the counts.
die() ->
    report(),
    exit(normal).

report() ->
    get(parent) ! {counts, self(), get(t), get(m), get(calls)}.

call_any(D) ->
    put(calls, get(calls) + 1),
    try
        case rand:uniform(10) of
            1 -> put(t, get(t) + 1), ?MODULE:stable_t(D);
            2 -> put(m, get(m) + 1), ?MODULE:stable_m(D);
            _ -> apply(?MODULE, fname(rand:uniform(?NF) - 1), [D])
        end
    catch error:torture -> ok
    end.

fname(N) -> list_to_atom("f" ++ integer_to_list(N)).

%% ---------------------------------------------------------------------------------------------

main(Seconds, Seed, Workers) ->
    main(Seconds, Seed, Workers, auto).

%% Resets: whether the stager and the sessions may change call_time (and call_memory) counters
%% of f0..f11 (`true`, `restart`, `false`, `pause`): `on`, `off`, or `auto` (off on a release that
%% may predate erlang/otp#8897, the fix of the reset crash erlang/otp#8835, so that the torture
%% there looks for other problems). With resets off, even functions churn call_count instead;
%% stable_t keeps its call_time counter, charged on every schedule-in and -out.
main(Seconds, Seed, Workers, Resets) ->
    rand:seed(exsss, {Seed, Seed bxor 16#5eed, Seed + 1}),
    Sink = spawn(fun sink/0),
    register(bpspec_torture_sink, Sink),
    Time = case Resets of on -> true; off -> false; auto -> not reset_crash_possible() end,
    Memory = Time andalso memory_supported(),
    Sessions = sessions_supported(),
    io:format("bpspec_torture start otp=~s schedulers=~p dirty_cpu=~p seconds=~p seed=~p "
              "workers=~p call_memory=~p sessions=~p call_time_resets=~p~n",
              [erlang:system_info(otp_release), erlang:system_info(schedulers_online),
               erlang:system_info(dirty_cpu_schedulers_online), Seconds, Seed, Workers,
               Memory, Sessions, Time]),
    put(bpspec_time_resets, Time),
    ets:new(bpspec_torture, [named_table, public, set, {write_concurrency, true}]),
    [ets:insert(bpspec_torture, {K, 0}) || K <- counters()],
    erlang:trace_pattern({?MODULE, stable_t, 1}, true, [call_count, call_time]),
    Memory andalso erlang:trace_pattern({?MODULE, stable_m, 1}, true, [call_count, call_memory]),
    Deadline = erlang:monotonic_time(millisecond) + Seconds * 1000,
    Main = self(),
    Helpers = [spawn_monitor(fun() -> seed(Seed + 11), put(bpspec_time_resets, Time),
                                      stager(Deadline, Memory) end),
               spawn_monitor(fun() -> seed(Seed + 12), querier(Deadline, Memory) end),
               spawn_monitor(fun() -> seed(Seed + 13), querier(Deadline, Memory) end)]
        ++ [spawn_monitor(fun() -> seed(Seed + 14), session_churn(Deadline, Sink) end)
            || Sessions, Time],
    [spawn_worker(Main, Sink, Seed + 100 + I, Deadline) || I <- lists:seq(1, Workers)],
    {T, M, Calls, Spawned} = collect(Workers, Main, Sink, Seed, Deadline, 0, 0, 0, Workers, 0),
    [wait_down(H) || H <- Helpers],
    conservation(T, M, Memory),
    io:format("bpspec_torture result calls=~p stable_t_calls=~p stable_m_calls=~p processes=~p ~s~n",
              [Calls, T, M, Spawned,
               lists:join(" ", [io_lib:format("~p=~p", [K, V])
                                || K <- counters(), [{_, V}] <- [ets:lookup(bpspec_torture, K)]])]),
    halt(0).

wait_down({H, Ref}) ->
    receive
        {'DOWN', Ref, process, H, normal} -> ok;
        {'DOWN', Ref, process, H, Why} ->
            io:format("bpspec_torture helper ~p failed: ~p~n", [H, Why]),
            bump(bad_helper_crash)
    after 60000 -> bump(bad_helper_stuck)
    end.

seed(S) -> rand:seed(exsss, {S, S bxor 16#5eed, S + 1}).

counters() ->
    [trace_patterns, queries, pauses, paused_checks, sessions_created, sessions_destroyed,
     paused_time_grew, paused_row_appeared,
     bad_paused_count, bad_paused_row_vanished, bad_shape, bad_monotone, bad_conservation,
     bad_helper_stuck, bad_helper_crash, bad_worker_stuck].

bump(K) -> ets:update_counter(bpspec_torture, K, 1).
bump(K, N) -> ets:update_counter(bpspec_torture, K, N).

memory_supported() ->
    try erlang:trace_pattern({?MODULE, f1, 1}, true, [call_memory]) of
        _ -> erlang:trace_pattern({?MODULE, f1, 1}, false, [call_memory]), true
    catch error:badarg -> false
    end.

sessions_supported() ->
    _ = code:ensure_loaded(trace),
    erlang:function_exported(trace, session_create, 3).

sink() -> receive _ -> sink() end.

%% Workers: replaced when they finish or die; each reports its counts.
spawn_worker(Main, Sink, S, Deadline) ->
    spawn(fun() ->
                  put(parent, Main), put(t, 0), put(m, 0), put(calls, 0),
                  seed(S),
                  erlang:trace(self(), true, [call, {tracer, Sink}]),
                  worker(Deadline, 200 + rand:uniform(2000))
          end).

worker(Deadline, 0) ->
    _ = Deadline, report();
worker(Deadline, N) ->
    case erlang:monotonic_time(millisecond) < Deadline of
        true -> call_any(3), worker(Deadline, N - 1);
        false -> report()
    end.

collect(0, _, _, _, _, T, M, C, Spawned, _) ->
    {T, M, C, Spawned};
collect(Live, Main, Sink, Seed, Deadline, T, M, C, Spawned, Seq) ->
    receive
        {counts, _Pid, T1, M1, C1} ->
            case erlang:monotonic_time(millisecond) < Deadline of
                true ->
                    spawn_worker(Main, Sink, Seed + 1000000 + Seq, Deadline),
                    collect(Live, Main, Sink, Seed, Deadline, T + T1, M + M1, C + C1,
                            Spawned + 1, Seq + 1);
                false ->
                    collect(Live - 1, Main, Sink, Seed, Deadline, T + T1, M + M1, C + C1,
                            Spawned, Seq)
            end
    after 120000 ->
            bump(bad_worker_stuck),
            {T, M, C, Spawned}
    end.

%% Can this release crash when a call_time/call_memory counter is reset under traced processes
%% (erlang/otp#8835)? The fix (erlang/otp#8897) is in OTP 26.2.5.4 and the 27 line; before 28 this
%% says yes whenever it cannot tell (26.2.5.4 and later 26 or 27 patches lose the resets, harmless).
reset_crash_possible() ->
    list_to_integer(erlang:system_info(otp_release)) < 28.

%% The stager: churn on f0..f11, pause checks.
stager(Deadline, Memory) ->
    case erlang:monotonic_time(millisecond) < Deadline of
        false -> ok;
        true ->
            N = rand:uniform(?NF) - 1,
            MFA = {?MODULE, fname(N), 1},
            Kind = case N rem 2 of
                       0 -> case get(bpspec_time_resets) of false -> call_count; _ -> call_time end;
                       1 when Memory -> call_memory;
                       1 -> call_count
                   end,
            Flags = case rand:uniform(3) of 1 -> [call_count]; 2 -> [Kind]; 3 -> lists:usort([call_count, Kind]) end,
            Op = element(rand:uniform(6), {true, false, pause, restart, pause, pause}),
            Check = Op =:= pause andalso Kind =/= call_count andalso lists:member(Kind, Flags),
            %% Pausing a counter that does not exist creates a running one (ERTS), so only a
            %% counter that existed before the pause is checked.
            Existed = Check andalso is_list(element(2, erlang:trace_info(MFA, Kind))),
            erlang:trace_pattern(MFA, Op, Flags),
            bump(trace_patterns),
            case Existed of
                true -> paused_check(MFA, Kind);
                false -> ok
            end,
            stager(Deadline, Memory)
    end.

%% Read a just-paused counter, let the workers run, read it again. Nothing else touches it.
paused_check(MFA, Kind) ->
    bump(pauses),
    case erlang:trace_info(MFA, Kind) of
        {Kind, L1} when is_list(L1) ->
            [begin
                 timer:sleep(Wait),
                 {Kind, L2} = erlang:trace_info(MFA, Kind),
                 bump(paused_checks),
                 compare_paused(Kind, lists:sort(L1), lists:sort(L2))
             end || Wait <- [0, 1, rand:uniform(5)]],
            ok;
        _ -> ok
    end.

compare_paused(Kind, L1, L2) ->
    M1 = maps:from_list([{element(1, R), R} || R <- L1]),
    M2 = maps:from_list([{element(1, R), R} || R <- L2]),
    Vanished = [P || P <- maps:keys(M1), not maps:is_key(P, M2)],
    Appeared = [P || P <- maps:keys(M2), not maps:is_key(P, M1)],
    CountChanged = [P || P <- maps:keys(M1), maps:is_key(P, M2),
                         element(2, maps:get(P, M1)) =/= element(2, maps:get(P, M2))],
    AppearedWithCalls = [P || P <- Appeared, element(2, maps:get(P, M2)) =/= 0],
    Grew = [P || P <- maps:keys(M1), maps:is_key(P, M2),
                 figure(Kind, maps:get(P, M1)) =/= figure(Kind, maps:get(P, M2))],
    Vanished =/= [] andalso note(bad_paused_row_vanished, Kind, L1, L2),
    (CountChanged =/= [] orelse AppearedWithCalls =/= []) andalso note(bad_paused_count, Kind, L1, L2),
    Appeared =/= [] andalso bump(paused_row_appeared, length(Appeared)),
    Grew =/= [] andalso bump(paused_time_grew, length(Grew)),
    ok.

figure(call_time, {_, _, S, Us}) -> S * 1000000 + Us;
figure(call_memory, {_, _, W}) -> W.

note(K, Kind, L1, L2) ->
    case bump(K) of
        1 -> io:format("bpspec_torture first ~p (~p): before ~w after ~w~n", [K, Kind, L1, L2]);
        _ -> ok
    end,
    true.

%% Queriers: trace_info back to back; shapes and monotone counts of the stable functions.
querier(Deadline, Memory) -> querier(Deadline, Memory, #{}).

querier(Deadline, Memory, Last) ->
    case erlang:monotonic_time(millisecond) < Deadline of
        false -> ok;
        true ->
            {F, Key} = case rand:uniform(6) of
                           1 -> {stable_t, call_time};
                           2 when Memory -> {stable_m, call_memory};
                           3 -> {stable_t, call_count};
                           _ -> {fname(rand:uniform(?NF) - 1), any_key(Memory)}
                       end,
            R = erlang:trace_info({?MODULE, F, 1}, Key),
            bump(queries),
            shape(R),
            querier(Deadline, Memory, monotone(F, Key, R, Last))
    end.

any_key(true) -> element(rand:uniform(4), {call_time, call_memory, call_count, all});
any_key(false) -> element(rand:uniform(3), {call_time, call_count, all}).

shape({all, L}) when is_list(L) -> [shape(X) || X <- L], ok;
shape({K, L}) when (K =:= call_time orelse K =:= call_memory), is_list(L) ->
    Pids = [element(1, R) || R <- L],
    Bad = length(lists:usort(Pids)) =/= length(Pids)
        orelse lists:any(fun(R) -> lists:any(fun(X) -> is_integer(X) andalso X < 0 end,
                                             tl(tuple_to_list(R))) end, L),
    Bad andalso note(bad_shape, K, L, []),
    ok;
shape(_) -> ok.

monotone(F, Key, R, Last) when F =:= stable_t; F =:= stable_m ->
    N = case R of
            {call_count, C} when is_integer(C) -> C;
            {_, L} when is_list(L) -> lists:sum([element(2, X) || X <- L]);
            _ -> undefined
        end,
    case maps:get({F, Key}, Last, undefined) of
        Prev when is_integer(Prev), is_integer(N), N < Prev ->
            note(bad_monotone, Key, [{F, Prev}], [{F, N}]);
        _ -> ok
    end,
    Last#{{F, Key} => N};
monotone(_, _, _, Last) -> Last.

%% Sessions (OTP 27+): create, trace every process and some functions, query, destroy.
session_churn(Deadline, Sink) ->
    case erlang:monotonic_time(millisecond) < Deadline of
        false -> ok;
        true ->
            S = trace:session_create(bpspec_torture, Sink, []),
            bump(sessions_created),
            try trace:process(S, all, true, [call]) catch error:badarg -> ok end,
            Fs = [fname(rand:uniform(?NF) - 1) || _ <- lists:seq(1, 4)],
            [begin
                 N = list_to_integer(tl(atom_to_list(F))),
                 Kind = case N rem 2 of 0 -> call_time; 1 -> call_memory end,
                 _ = trace:function(S, {?MODULE, F, 1}, true, [call_count, Kind]),
                 bump(trace_patterns)
             end || F <- Fs],
            timer:sleep(rand:uniform(20)),
            [begin
                 shape(trace:info(S, {?MODULE, F, 1}, K)),
                 bump(queries)
             end || F <- Fs, K <- [call_time, call_memory]],
            _ = trace:function(S, {?MODULE, hd(Fs), 1}, pause, [call_count]),
            trace:session_destroy(S),
            bump(sessions_destroyed),
            session_churn(Deadline, Sink)
    end.

%% The end: every worker reported; compare.
conservation(T, M, Memory) ->
    Check = fun(F, Key, Want) ->
                    Got = case erlang:trace_info({?MODULE, F, 1}, Key) of
                              {call_count, C} -> C;
                              {Key, L} when is_list(L) -> lists:sum([element(2, X) || X <- L]);
                              Other -> Other
                          end,
                    io:format("bpspec_torture conservation ~p ~p: made ~p counted ~p~n",
                              [F, Key, Want, Got]),
                    Got =:= Want orelse bump(bad_conservation)
            end,
    Check(stable_t, call_count, T),
    Check(stable_t, call_time, T),
    Memory andalso Check(stable_m, call_count, M),
    Memory andalso Check(stable_m, call_memory, M),
    ok.
