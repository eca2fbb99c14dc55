%% Reproducer: OTP 25.2.3 (Debian bookworm erlang-base, erts-13.1.5) dies with SIGFPE or SIGSEGV
%% in erts_schedule_time_break when one process resets a call_time counter
%% (erlang:trace_pattern(MFA, true, [call_time]) on a function that already has one) again and
%% again while call-traced processes run inside that function and are scheduled out and in, with
%% two or more schedulers. `restart` and `true`/`false` churn crash it the same way; `pause`
%% alone does not. Found by bpspec's ERTS torture (docs/erts-findings/torture-outcome.md); already
%% known and fixed upstream: erlang/otp#8835, fixed by erlang/otp#8897 (OTP 26.2.5.4, the 27 line).
%% Survived on OTP 29 (17.1.1, /opt/otp29) and on OTP 25 with one scheduler (+S 1:1), 10 s each.
%% Run (exit 136 or 139 within seconds on 25.2.3; prints "survived" otherwise):
%%   erlc otp25_call_time_reset_crash.erl && erl +S 2:2 -noshell -s otp25_call_time_reset_crash go
-module(otp25_call_time_reset_crash).
-export([go/0, f/0]).

f() -> ok.

loop() -> ?MODULE:f(), loop().

go() ->
    erlang:trace_pattern({?MODULE, f, 0}, true, [call_time]),
    Workers = [spawn(fun loop/0) || _ <- lists:seq(1, 16)],
    [erlang:trace(W, true, [call]) || W <- Workers],
    Deadline = erlang:monotonic_time(millisecond) + 10000,
    reset(Deadline, 0).

reset(Deadline, N) ->
    case erlang:monotonic_time(millisecond) > Deadline of
        true ->
            io:format("survived: ~p resets~n", [N]),
            halt();
        false ->
            erlang:trace_pattern({?MODULE, f, 0}, true, [call_time]),
            reset(Deadline, N + 1)
    end.
