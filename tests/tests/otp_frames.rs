//! Differential test against a real Erlang/OTP node (`erl`, installed by .ci/run): the trace
//! messages of `{caller}`, `return_trace`, `exception_trace` and the `return_to` flag, for the
//! Tracing.md example (foo → lots → 'of' → indirections → bar) and for an exception caught two
//! functions up, must be the same from the engine and from OTP. Call arguments are normalised to
//! the arity on the OTP side (the engine does not model arguments) and the tracee pid to `p`.

use bpspec_reference::*;
use std::process::Command;
use std::sync::Arc;

const MODULE: &str = r#"
-module(bpdiff).
-export([run/0, foo/0, lots/0, 'of'/0, indirections/0, bar/1, f/0, g/0, h/0, j/0, k/0]).
foo() -> lots(), ok.
lots() -> 'of'().
'of'() -> indirections().
indirections() -> bar(10).
bar(0) -> done;
bar(N) -> bar(N - 1).
f() -> g(), ok.
g() -> 7.
h() -> catch j(), ok.
j() -> k(), ok.
k() -> erlang:error(badarg).
norm({trace, _, call, {M, F, Args}}) -> {trace, p, call, {M, F, length(Args)}};
norm({trace, _, call, {M, F, Args}, X}) -> {trace, p, call, {M, F, length(Args)}, X};
norm(T) when is_tuple(T), element(1, T) =:= trace -> setelement(2, T, p);
norm(T) -> T.
collect(Acc) -> receive finished -> lists:reverse(Acc); M -> collect([norm(M) | Acc])
               after 5000 -> timeout end.
run() ->
    Self = self(),
    P = spawn(fun() -> receive go -> ok end,
                       bpdiff:foo(), bpdiff:f(), bpdiff:h(),
                       Self ! finished end),
    erlang:trace(P, true, [call, return_to, {tracer, Self}]),
    erlang:trace_pattern({bpdiff, bar, 1}, [{'_', [], [{message, {caller}}]}], [local]),
    erlang:trace_pattern({bpdiff, g, 0}, [{'_', [], [{return_trace}]}], [local]),
    erlang:trace_pattern({bpdiff, j, 0}, [{'_', [], [{return_trace}]}], [local]),
    erlang:trace_pattern({bpdiff, k, 0}, [{'_', [], [{exception_trace}]}], [local]),
    P ! go,
    [io:format("~w~n", [M]) || M <- collect([])],
    ok.
"#;

fn otp_messages() -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("bpspec-otp-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("bpdiff.erl"), MODULE).expect("write module");
    let erlc = Command::new("erlc")
        .arg("bpdiff.erl")
        .current_dir(&dir)
        .output()
        .expect("erlc not found: install Erlang/OTP (.ci/run installs erlang-nox)");
    assert!(erlc.status.success(), "erlc failed: {erlc:?}");
    let out = Command::new("erl")
        .args(["-noshell", "-s", "bpdiff", "run", "-s", "init", "stop"])
        .current_dir(&dir)
        .output()
        .expect("erl not found: install Erlang/OTP (.ci/run installs erlang-nox)");
    assert!(out.status.success(), "erl failed: {out:?}");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

fn engine_messages() -> Vec<String> {
    let names = [
        ("foo", 0),
        ("lots", 0),
        ("of", 0),
        ("indirections", 0),
        ("bar", 1),
        ("f", 0),
        ("g", 0),
        ("h", 0),
        ("j", 0),
        ("k", 0),
    ];
    let cfg = EngineConfig {
        functions: names
            .iter()
            .map(|&(n, a)| Mfa::new("bpdiff", n, a))
            .collect(),
        schedulers: 1,
        mutant: None,
    };
    let e: Arc<Engine> = Arc::new(Engine::new(cfg));
    let id = |n: &str| names.iter().position(|x| x.0 == n).unwrap();
    let tp = |n: &str, ms: MatchSpec| {
        let pat = Pattern::exact(&Mfa::new("bpdiff", n, names[id(n)].1));
        e.trace_pattern(&pat, PatternOp::True, &TraceSpec::local().ms(Some(ms)))
            .unwrap();
    };
    tp("bar", MatchSpec::CALLER);
    tp("g", MatchSpec::RETURN_TRACE);
    tp("j", MatchSpec::RETURN_TRACE);
    tp("k", MatchSpec::EXCEPTION_TRACE);
    let mb = Mailbox::new(1);
    let mut p = Proc::new(Process::new(100));
    let fl = ProcFlags {
        call: true,
        return_to: true,
        ..ProcFlags::default()
    };
    e.trace_process(&mut p, 0, true, fl, Some(ProcessTracer::spec(&mb)))
        .unwrap();
    let mut s = Scheduler::start(e.clone(), 0);
    s.schedule_in(&mut p);
    // bpdiff:foo() from the spawned fun (not a traced function: current is None).
    s.call_remote(id("foo"), &mut p);
    s.call_proc(id("lots"), &mut p); // lots(), ok.
    s.tail_call(id("of"), &mut p);
    s.tail_call(id("indirections"), &mut p);
    for _ in 0..=10 {
        s.tail_call(id("bar"), &mut p);
    }
    s.ret_with(&mut p, Term::Atom("done")); // bar(0) returns into foo
    s.ret(&mut p); // foo returns ok
    s.call_remote(id("f"), &mut p);
    s.call_proc(id("g"), &mut p);
    s.ret_with(&mut p, Term::Int(7));
    s.ret(&mut p);
    s.call_remote(id("h"), &mut p);
    s.call_proc(id("j"), &mut p); // catch j()
    s.call_proc(id("k"), &mut p); // k(), ok.
    s.raise(&mut p, "error", Term::Atom("badarg"), 2); // out of k and j, caught in h
    s.ret(&mut p);
    s.schedule_out(&mut p);
    s.sleep();
    assert!(p.stack.is_empty());
    mb.take_strings()
        .into_iter()
        .map(|m| m.replace("<0.100.0>", "p"))
        .collect()
}

#[test]
fn trace_frames_match_otp() {
    let _watchdog = bpspec_reference::watchdog::arm("otp_frames::trace_frames_match_otp");
    let ours = engine_messages();
    let theirs = otp_messages();
    assert_eq!(ours.len(), 19, "{ours:#?}");
    assert_eq!(ours, theirs, "engine vs OTP");
}
