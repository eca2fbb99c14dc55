%% bpspec_driver: runs bpspec scenarios on a real Erlang/OTP node and prints the observations in
%% bpspec's format (docs/scenario.md, "Observations"). The Rust side (oracle/src/erlang.rs)
%% turns each scenario into Erlang source files plus one term per scenario in a batch file:
%%
%%   {scenario, Id, [{Module, SourceFile}], [{ProcName, InitialFlags}], Ops}.
%%
%% Ops: {trace_pattern, [MFA], Spec, Flags} (Spec: true | false | pause | restart | a match spec;
%% a module wildcard is already expanded to the
%% scenario's modules; the results are summed), {call, Proc, M, F, Args, Times},
%% {trace_info, MFA | on_load, Item}, {trace_flags, Proc, How, Flags}, nop; and, with trace sessions
%% (OTP 27+, the trace module): {session_create, Name}, {session_destroy, Name} and
%% {in_session, Name, Op} for a trace_pattern, trace_info or trace_flags op in that session
%% (see "Sessions" below).
%%
%% Output lines: "BPSPEC OBS Id Json", "BPSPEC END Id", "BPSPEC ERROR Id Text", "BPSPEC DONE".
%% The controlling process (this one) is the tracer of every scenario process; it is never
%% traced itself, and this module never has a trace pattern.
-module(bpspec_driver).
-export([main/1, proc_loop/0, meta_loop/1]).

-define(TIMEOUT, 10000).

main([TermFile]) ->
    {ok, Terms} = file:consult(TermFile),
    lists:foreach(fun run/1, Terms),
    io:format("BPSPEC DONE~n"),
    halt(0).

run({scenario, Id, Mods, Procs, Ops}) ->
    Self = self(),
    put(ts, lists:any(fun is_session_op/1, Ops)),
    try
        lists:foreach(fun load/1, Mods),
        %% The meta tracer of `meta` trace patterns: collects its messages in order.
        put(meta, spawn(?MODULE, meta_loop, [[]])),
        Pids = [{Name, spawn_proc(Self, Flags)} || {Name, Flags} <- Procs],
        put(pids, Pids),
        run_ops(Id, 0, Ops, Pids),
        io:format("BPSPEC END ~p~n", [Id])
    catch
        C:R:St ->
            Text = lists:flatten(io_lib:format("~0p:~0p ~0p", [C, R, St])),
            io:format("BPSPEC ERROR ~p ~s~n", [Id, [Ch || Ch <- Text, Ch =/= $\n]])
    after
        %% Only what this scenario loaded: a refused module name may be a real OTP module.
        Loaded = [M || {M, _} <- Mods, get({loaded, M}) =:= true],
        sessions_cleanup(),
        cleanup([{M, x} || M <- Loaded], case get(pids) of undefined -> []; P -> P end),
        [erase({loaded, M}) || M <- Loaded],
        [erase({src, M}) || {M, _} <- Mods],
        case erase(meta) of undefined -> ok; MP -> exit(MP, kill) end,
        erase(pids)
    end.

load({M, Src}) ->
    case code:is_loaded(M) of
        false -> ok;
        _ -> error({module_name_taken_by_otp, M, already_loaded})
    end,
    case which(M) of
        non_existing -> ok;
        Where -> error({module_name_taken_by_otp, M, Where})
    end,
    {module, M} = code:load_binary(M, Src, compiled(M, Src)),
    put({loaded, M}, true),
    put({src, M}, Src).

%% code:which/1 of a module that is not loaded searches every directory of the code path (about
%% 2 ms; it was a third of a batch's time). Its answer for a name does not change within a
%% batch: the code path is fixed and the driver writes no .beam files. So once per name.
which(M) ->
    case get({which, M}) of
        undefined ->
            W = code:which(M),
            put({which, M}, W),
            W;
        W ->
            W
    end.

%% The binary compile:file/2 makes of Src, compiled once per batch for each text: the generated
%% modules repeat (4516 files, 2616 texts in 3000 random scenarios). The first line, a comment
%% naming the scenario, is left out of the key (it is not code). Each load is still a fresh
%% code:load_binary/3 of it under the scenario's own file name.
compiled(M, Src) ->
    {ok, Text} = file:read_file(Src),
    Key = case Text of
              <<"%%", _/binary>> -> lists:last(binary:split(Text, <<"\n">>));
              _ -> Text
          end,
    case get({compiled, Key}) of
        undefined ->
            case compile:file(Src, [binary, return_errors]) of
                {ok, M, Bin} ->
                    put({compiled, Key}, Bin),
                    Bin;
                Other ->
                    error({compile, Src, Other})
            end;
        Bin ->
            Bin
    end.

%% A new version of the same code (compiled again from its source), delete, purge,
%% soft_purge (docs/scenario.md, "Code loading"); the answer as a boolean.
code_op(load, M) ->
    load_version(M, get({src, M}));
%% The second code (the functions' changed_body): changed/M.erl next to M.erl.
code_op(load_changed, M) ->
    Src = get({src, M}),
    load_version(M, filename:join([filename:dirname(Src), "changed", filename:basename(Src)]));
code_op(delete, M) ->
    code:delete(M);
code_op(purge, M) ->
    code:purge(M);
code_op(soft_purge, M) ->
    code:soft_purge(M).

load_version(M, Src) ->
    case code:load_binary(M, Src, compiled(M, Src)) of
        {module, M} -> true;
        {error, _} -> false
    end.

spawn_proc(Self, Flags) ->
    P = spawn(fun ?MODULE:proc_loop/0),
    Extra = [F || F <- [arity, return_to], lists:member(F, Flags)],
    case lists:member(call, Flags) of
        true -> 1 = erlang:trace(P, true, [call, {tracer, Self}] ++ Extra ++ ts_flag(true));
        false when Extra =/= [] -> 1 = erlang:trace(P, true, Extra);
        false -> ok
    end,
    P.

proc_loop() ->
    receive
        {call, From, M, F, Args, Times} ->
            From ! {result, self(), calls(M, F, Args, Times, none)},
            proc_loop();
        stop ->
            ok
    end.

calls(_M, _F, _Args, 0, Last) ->
    Last;
calls(M, F, Args, Times, _) ->
    R = try apply(M, F, Args) of
            V -> {return, V}
        catch
            error:E -> {raise, E}
        end,
    calls(M, F, Args, Times - 1, R).

cleanup(Mods, Pids) ->
    [begin
         Ref = monitor(process, P),
         exit(P, kill),
         receive {'DOWN', Ref, process, P, _} -> ok end
     end || {_, P} <- Pids],
    %% The on_load pattern would trace the next scenario's modules: off in either mode.
    _ = (catch erlang:trace_pattern(on_load, false, [])),
    _ = (catch erlang:trace_pattern(on_load, false, [local, call_count, call_time])),
    _ = (catch erlang:trace_pattern(on_load, false, [call_memory])),
    [begin
         _ = (catch erlang:trace_pattern({M, '_', '_'}, false, [local, call_count, call_time])),
         _ = (catch erlang:trace_pattern({M, '_', '_'}, false, [call_memory])),
         _ = (catch erlang:trace_pattern({M, '_', '_'}, false, [])),
         code:purge(M),
         code:delete(M),
         code:purge(M)
     end || {M, _} <- Mods],
    flush().

flush() ->
    receive _ -> flush() after 0 -> ok end.

run_ops(_Id, _I, [], _Pids) ->
    ok;
run_ops(Id, I, [Op | Rest], Pids) ->
    op(Id, I, Op, Pids),
    run_ops(Id, I + 1, Rest, Pids).

op(Id, I, {trace_pattern, MFAs, Spec, Flags0}, _Pids) ->
    Flags = [case F of meta -> {meta, get(meta)}; _ -> F end || F <- Flags0],
    R = try lists:sum([erlang:trace_pattern(MFA, Spec, Flags) || MFA <- MFAs])
        catch error:badarg:St -> badarg_cause(St)
        end,
    obs(Id, I, ["\"trace_pattern\":", pattern_result(R)]);
op(Id, I, {call, Proc, M, F, Args, Times}, Pids) ->
    Pid = proplists:get_value(Proc, Pids),
    Pid ! {call, self(), M, F, Args, Times},
    R = receive {result, Pid, Res} -> Res after ?TIMEOUT -> error({timeout, call, M, F, Args}) end,
    end_call(Id, I, Pid, R, Pids);
%% A function with receive: the process waits in it (docs/scenario.md, "Code loading") until a
%% resume op sends bpspec_resume; its result comes then.
op(Id, I, {call_wait, Proc, M, F, Args, 1}, Pids) ->
    Pid = proplists:get_value(Proc, Pids),
    Pid ! {call, self(), M, F, Args, 1},
    waiting_in(Pid, {M, F, length(Args)}, 10000),
    end_call(Id, I, Pid, waiting, Pids);
op(Id, I, {resume, Proc}, Pids) ->
    Pid = proplists:get_value(Proc, Pids),
    Pid ! bpspec_resume,
    R = receive {result, Pid, Res} -> Res after ?TIMEOUT -> error({timeout, resume, Proc}) end,
    end_call(Id, I, Pid, R, Pids);
op(Id, I, {trace_info, MFA, Item}, Pids) ->
    {Item, V} = erlang:trace_info(MFA, Item),
    obs(Id, I, ["\"trace_info\":{\"item\":", str(Item), ",\"value\":", info_value(Item, V, Pids), "}"]);
op(Id, I, {trace_flags, Proc, How, Flags}, Pids) ->
    Pid = proplists:get_value(Proc, Pids),
    Extra = case How of true -> [{tracer, self()}] ++ ts_flag(true); false -> [] end,
    N = erlang:trace(Pid, How, Flags ++ Extra),
    obs(Id, I, ["\"trace_flags\":", integer_to_list(N)]);
op(_Id, _I, nop, _Pids) ->
    ok;
op(Id, I, {code, Kind, M}, _Pids) ->
    obs(Id, I, ["\"code\":", atom_to_list(code_op(Kind, M))]);
op(Id, I, Op, Pids) ->
    session_op(Id, I, Op, Pids).

%% The end of a call (or resume) op: wait until the process waits in receive again (scheduled
%% out), then its trace messages, meta messages and result (or `waiting`: it waits inside a
%% receive function).
end_call(Id, I, Pid, R, Pids) ->
    scheduled_out(Pid, 100000),
    Ref = erlang:trace_delivered(Pid),
    receive {trace_delivered, Pid, Ref} -> ok after ?TIMEOUT -> error(trace_delivered_timeout) end,
    case get(ts) of
        true -> session_traces(Id, I, Pids);
        _ -> traces(Id, I, Pids)
    end,
    meta_traces(Id, I, Pids),
    case R of
        {return, V} -> obs(Id, I, ["\"return\":", term_json(V)]);
        {raise, E} -> obs(Id, I, ["\"raise\":", term_json(E)]);
        waiting -> obs(Id, I, ["\"waiting\":true"])
    end.

%% Wait until Pid waits in receive inside MFA (polled, at most N times 1 ms).
waiting_in(Pid, MFA, 0) ->
    error({timeout, waiting_in, Pid, MFA});
waiting_in(Pid, MFA, N) ->
    case erlang:process_info(Pid, [status, current_function]) of
        [{status, waiting}, {current_function, MFA}] -> ok;
        _ -> timer:sleep(1), waiting_in(Pid, MFA, N - 1)
    end.

%% Wait until the process waits in receive, i.e. it has been scheduled out (which charges the
%% pending call_time/call_memory of the function it is charged to): bpspec's runner schedules a
%% process out after each call op too. At most N polls.
scheduled_out(Pid, 0) ->
    error({not_scheduled_out, Pid, process_info(Pid, status)});
scheduled_out(Pid, N) ->
    case process_info(Pid, status) of
        {status, waiting} -> ok;
        _ -> erlang:yield(), scheduled_out(Pid, N - 1)
    end.

traces(Id, I, Pids) ->
    receive
        {trace, P, call, {M, F, Args}} ->
            trace_obs(Id, I, P, Pids, "call", M, F, arity(Args), Args, none),
            traces(Id, I, Pids);
        {trace, P, call, {M, F, Args}, Caller} ->
            trace_obs(Id, I, P, Pids, "call", M, F, arity(Args), Args, str(fname(Caller))),
            traces(Id, I, Pids);
        {trace, P, return_to, To} ->
            trace_line(Id, I, "legacy", P, Pids, "return_to", fname(To), [], none),
            traces(Id, I, Pids);
        {trace, P, return_from, {M, F, A}, V} ->
            trace_obs(Id, I, P, Pids, "return_from", M, F, A, [], term_json(V)),
            traces(Id, I, Pids);
        {trace, P, exception_from, {M, F, A}, {Class, R}} ->
            trace_obs(Id, I, P, Pids, "exception_from", M, F, A, [],
                      str(class_reason(Class, R))),
            traces(Id, I, Pids);
        {trace, _, _, _} = Other ->
            error({unexpected_trace_message, Other});
        {trace, _, _, _, _} = Other ->
            error({unexpected_trace_message, Other})
    after 0 ->
        ok
    end.

trace_obs(Id, I, P, Pids, Event, M, F, A, Args, Value) ->
    trace_line(Id, I, "legacy", P, Pids, Event, fname({M, F, A}), Args, Value).

trace_line(Id, I, S, P, Pids, Event, Mfa, Args, Value) ->
    ValueJson = case Value of none -> ""; _ -> [",\"value\":", Value] end,
    obs(Id, I, ["\"trace\":{\"session\":", str(S), ",\"process\":", str(name(P, Pids)),
                ",\"event\":\"", Event, "\",\"mfa\":", str(Mfa),
                ",\"args\":", term_json(Args),
                ValueJson, "}"]).

%% A function in a `{caller}` or a `return_to` message, as bpspec names it: "M:F/A", or "top"
%% for this module's function that makes the scenario's calls (`calls/5`: the harness).
fname({?MODULE, calls, 5}) -> "top";
fname({M, F, A}) -> io_lib:format("~s:~s/~p", [M, F, A]);
fname(undefined) -> "undefined".

name(P, Pids) ->
    case lists:keyfind(P, 2, Pids) of {N, _} -> N; false -> error({unknown_pid, P}) end.

obs(Id, I, Body) ->
    io:format("BPSPEC OBS ~p ~s~n", [Id, iolist_to_binary(["{\"op\":", integer_to_list(I), ",", Body, "}"])]).

str(A) when is_atom(A) -> str(atom_to_list(A));
str(S) -> ["\"", S, "\""].

atom_or_int(N) when is_integer(N) -> integer_to_list(N);
atom_or_int(A) when is_atom(A) -> str(A).

%% badarg, with the cause of the exception's error_info (EEP 54) where ERTS gives one.
badarg_cause(St) ->
    case [C || {_, _, _, Info} <- St, #{cause := C} <- [proplists:get_value(error_info, Info, #{})]] of
        [C | _] when is_atom(C) -> {badarg, C};
        _ -> badarg
    end.

pattern_result({badarg, C}) -> ["{\"badarg\":", str(C), "}"];
pattern_result(R) -> atom_or_int(R).

%% A term as bpspec's JSON (docs/scenario.md, "Terms"): integers, atoms as strings, lists as
%% arrays, tuples as {"tuple": [...]}.
term_json(N) when is_integer(N) -> integer_to_list(N);
term_json(A) when is_atom(A) -> str(A);
term_json(L) when is_list(L) -> ["[", lists:join(",", [term_json(X) || X <- L]), "]"];
term_json(T) when is_tuple(T) -> ["{\"tuple\":", term_json(tuple_to_list(T)), "}"];
term_json(Other) -> error({no_json_for_term, Other}).

%% A call message's third element is {M, F, Args}, or {M, F, Arity} with the arity flag; the
%% observation's args are then the integer.
arity(Args) when is_list(Args) -> length(Args);
arity(Arity) when is_integer(Arity) -> Arity.

%% An exception_from value: "Class:Reason", an atom reason as ~s, any other as ~w.
class_reason(Class, R) when is_atom(R) -> io_lib:format("~s:~s", [Class, R]);
class_reason(Class, R) -> io_lib:format("~s:~w", [Class, R]).

%% A match-spec body action as the scenario names it.
action({message, {caller}}) -> caller;
action({A}) when is_atom(A) -> A.

%% trace_info values, per item (docs/scenario.md, "Observations").
info_value(_, undefined, _) -> str(undefined);
info_value(_, false, _) -> "false";
%% Only trace_info(on_load, _) answers true (a counter flag of the on_load pattern).
info_value(_, true, _) -> "true";
info_value(all, L, Pids) when is_list(L) ->
    ["[", lists:join(",", [["[", str(K), ",", info_value(K, V, Pids), "]"] || {K, V} <- L]), "]"];
info_value(Item, MS, _) when Item =:= match_spec; Item =:= meta_match_spec ->
    case MS of
        [] -> "[]";
        [{'_', [], Actions}] -> ["{\"actions\":[", lists:join(",", [str(action(A)) || A <- Actions]), "]}"];
        Other -> str(io_lib:format("~0p", [Other]))
    end;
info_value(meta, [], _) -> "[]";
info_value(meta, P, _) when is_pid(P) ->
    case get(meta) of P -> str(meta); _ -> str(io_lib:format("~0p", [P])) end;
info_value(call_time, L, Pids) when is_list(L) ->
    Rows = lists:sort([{atom_to_list(name(P, Pids)), C} || {P, C, _S, _Us} <- L]),
    ["[", lists:join(",", [["{\"process\":", str(N), ",\"count\":", integer_to_list(C), "}"] || {N, C} <- Rows]), "]"];
info_value(call_memory, L, Pids) when is_list(L) ->
    Rows = lists:sort([{atom_to_list(name(P, Pids)), C} || {P, C, _Words} <- L]),
    ["[", lists:join(",", [["{\"process\":", str(N), ",\"count\":", integer_to_list(C), "}"] || {N, C} <- Rows]), "]"];
info_value(_, N, _) when is_integer(N) -> integer_to_list(N);
info_value(_, A, _) when is_atom(A) -> str(A);
info_value(_, Other, _) -> str(io_lib:format("~0p", [Other])).

%% ---- Sessions (OTP 27+). Each session's tracer is a collector process of its own; the legacy
%% session's tracer stays this process. To merge the sessions' messages in the order ERTS sent
%% them, a scenario with session ops traces every process with strict_monotonic_timestamp (in
%% every session), and after a call the messages of all sessions are sorted by that stamp
%% ({MonotonicTime, UniqueInteger}: strictly increasing across the node).

is_session_op({session_create, _}) -> true;
is_session_op(_) -> false.

ts_flag(true) ->
    case get(ts) of true -> [strict_monotonic_timestamp]; _ -> [] end;
ts_flag(false) ->
    [].

sessions() ->
    case get(sessions) of undefined -> []; L -> L end.

session(Name) ->
    case lists:keyfind(Name, 1, sessions()) of
        {Name, S, _C, true} -> S;
        _ -> error({session_not_alive, Name})
    end.

session_op(_Id, _I, {session_create, Name}, _Pids) ->
    C = spawn(fun() -> collector([]) end),
    S = trace:session_create(Name, C, []),
    put(sessions, sessions() ++ [{Name, S, C, true}]);
session_op(_Id, _I, {session_destroy, Name}, _Pids) ->
    S = session(Name),
    true = trace:session_destroy(S),
    put(sessions, lists:keyreplace(Name, 1, sessions(), {Name, S, collector_of(Name), false}));
session_op(Id, I, {in_session, Name, {trace_pattern, MFAs, Spec, Flags}}, _Pids) ->
    S = session(Name),
    R = try lists:sum([trace:function(S, MFA, Spec, Flags) || MFA <- MFAs])
        catch error:badarg:St -> badarg_cause(St)
        end,
    obs(Id, I, ["\"trace_pattern\":", pattern_result(R)]);
session_op(Id, I, {in_session, Name, {trace_info, MFA, Item}}, Pids) ->
    {Item, V} = trace:info(session(Name), MFA, Item),
    obs(Id, I, ["\"trace_info\":{\"item\":", str(Item), ",\"value\":", info_value(Item, V, Pids), "}"]);
session_op(Id, I, {in_session, Name, {trace_flags, Proc, How, Flags}}, Pids) ->
    Pid = proplists:get_value(Proc, Pids),
    N = trace:process(session(Name), Pid, How, Flags ++ ts_flag(How)),
    obs(Id, I, ["\"trace_flags\":", integer_to_list(N)]).

collector_of(Name) ->
    {Name, _, C, _} = lists:keyfind(Name, 1, sessions()),
    C.

collector(Acc) ->
    receive
        {dump, From} ->
            From ! {msgs, self(), lists:reverse(Acc)},
            collector([]);
        M ->
            collector([M | Acc])
    end.

%% After trace_delivered: the legacy messages (this mailbox) and each live session's (its
%% collector's), merged by their timestamps.
session_traces(Id, I, Pids) ->
    Own = drain_ts([]),
    Theirs = [begin
                  C ! {dump, self()},
                  receive {msgs, C, L} -> {Name, L} after ?TIMEOUT -> error({collector_timeout, Name}) end
              end || {Name, _S, C, true} <- sessions()],
    Stamped = [untimestamp(Name, M) || {Name, L} <- [{legacy, Own} | Theirs], M <- L],
    [emit_trace(Id, I, Pids, Name, M) || {_Ts, Name, M} <- lists:keysort(1, Stamped)],
    ok.

drain_ts(Acc) ->
    receive
        M when element(1, M) =:= trace_ts -> drain_ts([M | Acc]);
        {trace, _, _, _} = M -> error({unstamped_trace_message, M});
        {trace, _, _, _, _} = M -> error({unstamped_trace_message, M})
    after 0 ->
        lists:reverse(Acc)
    end.

%% {trace_ts, P, Tag, A[, X], Ts} -> {Ts, Session, {trace, P, Tag, A[, X]}}.
untimestamp(Name, M) when element(1, M) =:= trace_ts ->
    L = tuple_to_list(M),
    [trace_ts | Rest] = lists:droplast(L),
    {lists:last(L), Name, list_to_tuple([trace | Rest])};
untimestamp(Name, M) ->
    error({unexpected_message_in_session, Name, M}).

emit_trace(Id, I, Pids, S, {trace, P, call, {M, F, Args}}) ->
    session_trace_obs(Id, I, P, Pids, S, "call", M, F, arity(Args), Args, none);
emit_trace(Id, I, Pids, S, {trace, P, call, {M, F, Args}, Caller}) ->
    session_trace_obs(Id, I, P, Pids, S, "call", M, F, arity(Args), Args, str(fname(Caller)));
emit_trace(Id, I, Pids, S, {trace, P, return_to, To}) ->
    trace_line(Id, I, S, P, Pids, "return_to", fname(To), [], none);
emit_trace(Id, I, Pids, S, {trace, P, return_from, {M, F, A}, V}) ->
    session_trace_obs(Id, I, P, Pids, S, "return_from", M, F, A, [], term_json(V));
emit_trace(Id, I, Pids, S, {trace, P, exception_from, {M, F, A}, {Class, R}}) ->
    session_trace_obs(Id, I, P, Pids, S, "exception_from", M, F, A, [],
                      str(class_reason(Class, R)));
emit_trace(_Id, _I, _Pids, S, Other) ->
    error({unexpected_trace_message, S, Other}).

session_trace_obs(Id, I, P, Pids, S, Event, M, F, A, Args, Value) ->
    trace_line(Id, I, S, P, Pids, Event, fname({M, F, A}), Args, Value).

%% Destroy what the scenario left alive (its patterns go with it) and stop the collectors.
sessions_cleanup() ->
    [begin
         case Alive of true -> _ = (catch trace:session_destroy(S)); false -> ok end,
         exit(C, kill)
     end || {_Name, S, C, Alive} <- sessions()],
    erase(sessions),
    erase(ts),
    ok.
%% The meta collector: keeps the messages in arrival order until asked for them.
meta_loop(Acc) ->
    receive
        {dump, From, Ref} -> From ! {Ref, lists:reverse(Acc)}, meta_loop([]);
        M -> meta_loop([M | Acc])
    end.

%% The meta tracer's messages of this op (after trace_delivered, so all of them), observed
%% after the call tracer's: ERTS orders messages per receiver only.
meta_traces(Id, I, Pids) ->
    Ref = make_ref(),
    get(meta) ! {dump, self(), Ref},
    Msgs = receive {Ref, L} -> L after ?TIMEOUT -> error(meta_dump_timeout) end,
    lists:foreach(
      fun({trace_ts, P, call, {M, F, Args}, _Ts}) -> meta_obs(Id, I, P, Pids, M, F, Args);
         ({trace, P, call, {M, F, Args}}) -> meta_obs(Id, I, P, Pids, M, F, Args);
         (Other) -> error({unexpected_meta_message, Other})
      end, Msgs).

meta_obs(Id, I, P, Pids, M, F, Args) ->
    obs(Id, I, ["\"trace\":{\"session\":\"meta\",\"process\":", str(name(P, Pids)),
                ",\"event\":\"call\",\"mfa\":",
                str(io_lib:format("~s:~s/~p", [M, F, arity(Args)])),
                ",\"args\":", term_json(Args), "}"]).
