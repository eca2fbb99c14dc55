%% F4 (docs/erts-findings/README.md, docs/nonblocking-load.md §8): processes whose call_time
%% state names m:f/0 after m:f/0 tail-called n:g/0; m is reloaded and soft-purged (check_process_code
%% does not find them), then each process is woken (scheduled in and out: a charge of its state).
%% Run: erlc otp25_call_time_tail_call_purge.erl && erl -noshell -eval 'otp25_call_time_tail_call_purge:run(200)'
-module(otp25_call_time_tail_call_purge).
-export([run/1]).

%% m:f/0 is call_time traced and tail-calls n:g/0 (another module), which waits.
src_m(V) ->
    ["-module(m).\n-export([f/0, v/0]).\n",
     "f() -> n:g().\n",
     "v() -> ", integer_to_list(V), ".\n"].
src_n() ->
    "-module(n).\n-export([g/0]).\n"
    "g() -> receive {go, From} -> From ! done, g(); stop -> ok end.\n".

compile_load(Src, Mod) ->
    Forms = scan(lists:flatten(Src)),
    {ok, Mod, Bin} = compile:forms(Forms, []),
    {module, Mod} = code:load_binary(Mod, atom_to_list(Mod) ++ ".erl", Bin),
    Bin.

scan(S) ->
    {ok, Toks, _} = erl_scan:string(S),
    split(Toks, [], []).
split([], [], Acc) -> lists:reverse(Acc);
split([{dot, _} = D | T], Cur, Acc) ->
    {ok, F} = erl_parse:parse_form(lists:reverse([D | Cur])),
    split(T, [], [F | Acc]);
split([H | T], Cur, Acc) -> split(T, [H | Cur], Acc).

run(N) ->
    compile_load(src_n(), n),
    loop(N, 1).

loop(0, _) -> io:format("survived~n"), halt(0);
loop(K, V) ->
    compile_load(src_m(V), m),
    erlang:trace_pattern({m, '_', '_'}, true, [call_time]),
    Ps = [spawn(fun() -> erlang:trace(self(), true, [call]), m:f() end) || _ <- lists:seq(1, 20)],
    timer:sleep(5),
    K =:= 1 andalso io:format("before reload: ~p~n", [erlang:trace_info({m, f, 0}, call_time)]),
    %% reload m: the version the processes' call_time state names becomes old
    compile_load(src_m(V + 1), m),
    %% purge: check_process_code finds none of them in old m (they are in n:g)
    true = code:soft_purge(m),
    %% churn memory so the freed code area may be reused
    _ = [compile_load(src_m(V + 100 + J), m) =/= x andalso code:purge(m) || J <- lists:seq(1, 3)],
    %% wake each process: it is scheduled in and out (schedule-out charges pbt->ci)
    [begin P ! {go, self()}, receive done -> ok after 1000 -> io:format("no reply~n") end end || P <- Ps],
    [P ! stop || P <- Ps],
    K =:= 1 andalso io:format("after: ~p ~p~n", [erlang:trace_info({m, f, 0}, call_time), [process_info(P, current_function) || P <- lists:sublist(Ps, 2)]]),
    loop(K - 1, V + 200).
