%% seqtrace_driver: runs seq_trace scenarios on a real Erlang/OTP node and prints what happened
%% in a line format that bpspec-seqtrace's differential test parses (seqtrace/src/otp.rs).
%%
%% Usage: erl -noshell -pa DIR -s seqtrace_driver main FILE
%% FILE holds terms `{scenario, Id, [Step]}.` (file:consult). Output lines, one per fact:
%%   OTP Version                   the node's full OTP version (first line)
%%   BEGIN Id
%%   R Id StepNo Proc Result       result of a set/get/print/reset step (see result/1)
%%   E Id Label Kind Prev Curr From To Msg Ts   one seq_trace event the system tracer received
%%   END Id
%%   FAIL Id Reason                the scenario could not run (timeout, crash)
%%
%% The driver never sends a message to a worker: a message carries a trace token and receiving it
%% would change the worker's token. The controller publishes each step in a public ETS table
%% instead (ETS is not an information transfer seq_trace follows) and the worker whose turn it is
%% polls for it. That makes the global order of steps exactly the scenario's order.
-module(seqtrace_driver).
-export([main/1, worker/3, tracer/1]).

%% Every wait is bounded by time, not by a count of polls (a loaded machine polls slower).
-define(POLL_LIMIT, deadline(10000)).
-define(RECV_TIMEOUT, 2000).

main([File]) ->
    seq_trace:set_token([]),
    %% Load every module a worker may call now: a module loaded on demand is fetched through the
    %% code server by messages, and a worker with a token would trace (and count) them.
    [{module, _} = code:ensure_loaded(M) || M <- [seq_trace, ets, lists, io_lib, io_lib_format,
                                                  erl_erts_errors, erlang, timer]],
    io:format("OTP ~s~n", [otp_version()]),
    case file:consult(File) of
        {ok, Scenarios} ->
            %% A warm-up scenario touching every step kind; its output is discarded.
            put(quiet, true),
            run(warmup()),
            erase(quiet),
            [run(S) || S <- Scenarios],
            io:format("DONE~n"),
            halt(0);
        {error, Reason} ->
            io:format("FAIL file ~p~n", [Reason]),
            halt(2)
    end.

otp_version() ->
    Rel = erlang:system_info(otp_release),
    File = filename:join([code:root_dir(), "releases", Rel, "OTP_VERSION"]),
    case file:read_file(File) of
        {ok, V} -> string:trim(binary_to_list(V));
        _ -> Rel
    end.

warmup() ->
    {scenario, 0, [{set, 0, label, 1}, {set, 0, send, true}, {set, 0, 'receive', true},
                   {set, 0, print, true}, {set, 0, timestamp, true}, {get, 0}, {get, 0, serial},
                   {trap_exit, 0}, {spawn_link, 0, 1}, {spawn, 0, 2}, {send, 0, 1, a},
                   {recv, 1, a}, {print, 1, w}, {print, 1, 1, w}, {save, 1, s}, {restore, 2, s},
                   {set, 1, bogus, x}, {print, 1, bad, x}, {exit, 1, bye}, {recv_exit, 0, 1},
                   {set_empty, 0}, {reset, 2}]}.

out(Fmt, Args) ->
    case get(quiet) of
        true -> ok;
        _ -> io:format(Fmt, Args)
    end.

run({scenario, Id, Steps}) ->
    Tab = ets:new(seqtrace_driver, [public, set]),
    T = spawn(?MODULE, tracer, [[]]),
    seq_trace:set_system_tracer(T),
    out("BEGIN ~p~n", [Id]),
    P0 = spawn(?MODULE, worker, [0, Tab, none]),
    Out = case wait_registered(Tab, 0, ?POLL_LIMIT) of
              ok -> steps(Id, Tab, Steps, 1);
              timeout -> {fail, register0}
          end,
    ets:insert(Tab, {go, stop, stop}),
    timer:sleep(5),
    seq_trace:set_system_tracer(false),
    T ! {dump, self()},
    Events = receive {events, E} -> E after ?RECV_TIMEOUT -> [] end,
    seq_trace:set_token([]),
    Name = fun(X) -> pid_name(Tab, X) end,
    [event_line(Id, Ev, Name) || Ev <- Events],
    case Out of
        ok -> ok;
        {fail, Why} -> out("FAIL ~p ~0p~n", [Id, Why])
    end,
    out("END ~p~n", [Id]),
    exit(P0, kill),
    [exit(P, kill) || {{pid, _}, P} <- ets:tab2list(Tab)],
    exit(T, kill),
    ets:delete(Tab),
    seq_trace:reset_trace(),
    ok.

steps(_Id, _Tab, [], _K) -> ok;
steps(Id, Tab, [Step | Rest], K) ->
    ets:insert(Tab, {go, K, Step}),
    case wait_done(Tab, K, ?POLL_LIMIT) of
        {done, none} -> steps(Id, Tab, Rest, K + 1);
        {done, R} ->
            out("R ~p ~p ~p ~s~n", [Id, K, element(2, Step), R]),
            steps(Id, Tab, Rest, K + 1);
        timeout -> {fail, {step, K, Step}}
    end.

deadline(Ms) -> erlang:monotonic_time(millisecond) + Ms.

expired(Deadline) -> erlang:monotonic_time(millisecond) > Deadline.

wait_done(Tab, K, Deadline) ->
    case ets:lookup(Tab, {done, K}) of
        [{_, R}] -> {done, R};
        [] ->
            case expired(Deadline) of
                true -> timeout;
                false -> erlang:yield(), wait_done(Tab, K, Deadline)
            end
    end.

wait_registered(Tab, I, Deadline) ->
    case ets:lookup(Tab, {pid, I}) of
        [_] -> ok;
        [] ->
            case expired(Deadline) of
                true -> timeout;
                false -> erlang:yield(), wait_registered(Tab, I, Deadline)
            end
    end.

%% ---- workers ------------------------------------------------------------------------------

worker(Idx, Tab, _) ->
    put(seqtrace_tab, Tab),
    ets:insert(Tab, {{pid, Idx}, self()}),
    ets:insert(Tab, {{idx, self()}, Idx}),
    wloop(Idx, Tab, 1, ?POLL_LIMIT).

%% A worker waits at most 10 s for its next step (the deadline restarts after each step it runs).
wloop(Idx, Tab, K, Deadline) ->
    %% The controller deletes the table after killing the workers; the kill is asynchronous, so
    %% a worker may look once more into a deleted table: that ends it quietly.
    Go = try ets:lookup(Tab, go) catch error:badarg -> exit(normal) end,
    case Go of
        [{go, stop, stop}] ->
            seq_trace:set_token([]),
            ok;
        [{go, K2, Step}] when K2 >= K, element(2, Step) =:= Idx ->
            R = (catch step(Step, Tab)),
            case R of
                {exit_now, Reason} ->
                    ets:insert(Tab, {{done, K2}, none}),
                    exit(Reason);
                _ ->
                    ets:insert(Tab, {{done, K2}, result(R)}),
                    wloop(Idx, Tab, K2 + 1, ?POLL_LIMIT)
            end;
        _ ->
            case expired(Deadline) of
                true -> exit(poll_limit);
                false -> erlang:yield(), wloop(Idx, Tab, K, Deadline)
            end
    end.

%% A spawn with a token is two transfers, spawn_request to the child and spawn_reply back; the
%% spawn BIF has handled the reply when it returns. The parent only waits for the child to be
%% registered so that later steps can name it.
spawned(Tab, C) ->
    case wait_registered(Tab, C, ?POLL_LIMIT) of
        timeout -> {error, spawn_timeout};
        ok -> none
    end.

pid_of(Tab, I) ->
    [{_, P}] = ets:lookup(Tab, {pid, I}),
    P.

step({spawn, _P, C}, Tab) ->
    spawn(?MODULE, worker, [C, Tab, none]),
    spawned(Tab, C);
step({spawn_link, _P, C}, Tab) ->
    spawn_link(?MODULE, worker, [C, Tab, none]),
    spawned(Tab, C);
step({send, _P, Q, Tag}, Tab) ->
    pid_of(Tab, Q) ! {Tag},
    none;
step({recv, _P, Tag}, _Tab) ->
    receive {Tag} -> none after ?RECV_TIMEOUT -> {error, no_message} end;
step({recv_exit, _P, Q}, Tab) ->
    From = pid_of(Tab, Q),
    receive {'EXIT', From, _} -> none after ?RECV_TIMEOUT -> {error, no_message} end;
step({trap_exit, _P}, _Tab) ->
    process_flag(trap_exit, true),
    none;
step({exit, _P, Reason}, _Tab) ->
    {exit_now, Reason};
step({set, _P, Component, Value}, _Tab) ->
    {old, seq_trace:set_token(Component, Value)};
step({set_empty, _P}, _Tab) ->
    {old, seq_trace:set_token([])};
step({save, _P, Slot}, Tab) ->
    ets:insert(Tab, {{slot, Slot}, seq_trace:get_token()}),
    none;
step({restore, _P, Slot}, Tab) ->
    [{_, Tok}] = ets:lookup(Tab, {slot, Slot}),
    {old, seq_trace:set_token(Tok)};
step({get, _P}, _Tab) ->
    {token, seq_trace:get_token()};
step({get, _P, Component}, _Tab) ->
    {component, seq_trace:get_token(Component)};
step({print, _P, Info}, _Tab) ->
    {printed, seq_trace:print(Info)};
step({print, _P, Label, Info}, _Tab) ->
    {printed, seq_trace:print(Label, Info)};
step({reset, _P}, _Tab) ->
    {reset, seq_trace:reset_trace()}.

%% A step's result as one line of text. Tokens are rendered field by field so the Rust side does
%% not have to parse Erlang terms: tok Flags Label Prev Curr From (From as a worker index).
result(none) -> none;
result({'EXIT', {Reason, _}}) -> io_lib:format("error ~0p", [Reason]);
result({'EXIT', Reason}) -> io_lib:format("error ~0p", [Reason]);
result({error, What}) -> io_lib:format("error ~0p", [What]);
result({old, V}) -> ["old ", value(V)];
result({token, V}) -> ["token ", value(V)];
result({component, V}) -> ["component ", value(V)];
result({printed, V}) -> io_lib:format("printed ~0p", [V]);
result({reset, V}) -> io_lib:format("reset ~0p", [V]).

value([]) -> "empty";
value({Flags, Label, Serial, From, LastCnt}) when is_integer(Flags) ->
    io_lib:format("tok ~p ~0p ~p ~p ~s", [Flags, Label, LastCnt, Serial, ext_pid(From)]);
value({serial, {P, C}}) -> io_lib:format("serial ~p ~p", [P, C]);
value({Name, V}) when is_atom(Name) -> io_lib:format("~p ~0p", [Name, V]);
value({P, C}) when is_integer(P), is_integer(C) -> io_lib:format("pair ~p ~p", [P, C]);
value(V) -> io_lib:format("~0p", [V]).

%% Tokens leave the worker, so their pid is rendered where the controller can name it.
ext_pid(P) when is_pid(P) ->
    pid_name(get(seqtrace_tab), P);
ext_pid(X) ->
    lists:flatten(io_lib:format("~0p", [X])).

pid_name(Tab, P) when is_pid(P) ->
    case ets:lookup(Tab, {idx, P}) of
        [{_, I}] -> integer_to_list(I);
        [] -> "x"
    end;
pid_name(_Tab, X) -> lists:flatten(io_lib:format("~0p", [X])).

%% ---- the system tracer --------------------------------------------------------------------

tracer(Acc) ->
    receive
        {dump, From} ->
            seq_trace:set_token([]),
            From ! {events, lists:reverse(Acc)};
        M ->
            seq_trace:set_token([]),
            tracer([M | Acc])
    end.

event_line(Id, {seq_trace, Label, Info}, Name) ->
    event_line(Id, Label, Info, "none", Name);
event_line(Id, {seq_trace, Label, Info, Ts}, Name) ->
    event_line(Id, Label, Info, ts_kind(Ts), Name);
event_line(Id, Other, _Name) ->
    out("E ~p other ~0p~n", [Id, Other]).

event_line(Id, Label, {Kind, {Prev, Curr}, From, To, Msg}, Ts, Name) ->
    out("E ~p ~0p ~p ~p ~p ~s ~s ~s ~s~n",
              [Id, Label, Kind, Prev, Curr, Name(From), Name(To), msg(Msg, Name), Ts]);
event_line(Id, Label, Info, Ts, _Name) ->
    out("E ~p ~0p other ~0p ~s~n", [Id, Label, Info, Ts]).

msg({Tag}, _Name) when is_atom(Tag) -> atom_to_list(Tag);
msg({'EXIT', P, Reason}, Name) -> lists:flatten(io_lib:format("EXIT:~s:~0p", [Name(P), Reason]));
msg(T, _Name) when is_tuple(T), tuple_size(T) > 0, is_atom(element(1, T)) ->
    "tuple:" ++ atom_to_list(element(1, T));
msg(Info, _Name) when is_atom(Info) -> atom_to_list(Info);
msg(Other, _Name) -> lists:flatten(io_lib:format("term:~0p", [Other])).

ts_kind({_, _, _}) -> "now";
ts_kind({A, B}) when is_integer(A), is_integer(B) -> "strict";
ts_kind(I) when is_integer(I) -> "mono";
ts_kind(_) -> "bad".
