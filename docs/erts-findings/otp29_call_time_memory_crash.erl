%% Reproducer: OTP 29.1.2 (Debian sid erlang-base 1:29.1.2) dies with SIGSEGV when a call-traced
%% process calls a function traced with call_time + call_memory from a function traced with
%% call_time only (also OTP 27.3.4.1, Debian trixie). Found by bpspec's random differential (docs/conformance.md "ERTS crashes
%% found"; cause in docs/deviations.md). Run (exit 139 on 29.1.2; prints "survived" if fixed):
%%   erlc otp29_call_time_memory_crash.erl && erl -noshell -s otp29_call_time_memory_crash go
-module(otp29_call_time_memory_crash).
-export([go/0, g/0, f/1]).

f(_) -> r.

g() -> f(0), ok.

go() ->
    erlang:trace_pattern({?MODULE, g, 0}, true, [call_time]),
    erlang:trace_pattern({?MODULE, f, 1}, true, [call_time, call_memory]),
    Self = self(),
    P = spawn(fun() ->
                      receive go -> ok end,
                      ?MODULE:g(),
                      Self ! done
              end),
    erlang:trace(P, true, [call]),
    P ! go,
    receive done -> ok end,
    io:format("survived: ~p~n", [erlang:trace_info({?MODULE, f, 1}, all)]),
    halt().
