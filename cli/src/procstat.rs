//! CPU seconds from /proc/self/stat (Linux): this process's own (`bpspec rate`) and its waited-for
//! children's (`bpspec part`: the part's command and everything it ran and waited for).

/// Linux's USER_HZ: /proc reports CPU times in ticks of 1/100 s on every architecture Linux
/// runs on (proc(5), "in clock ticks (divide by sysconf(_SC_CLK_TCK))", which is 100).
const TICKS_PER_SEC: f64 = 100.0;

/// Fields 14 to 17 of /proc/self/stat (utime, stime, cutime, cstime) in seconds, or `None` where
/// /proc is not there or the line does not parse.
fn times() -> Option<[f64; 4]> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which ends with the last ')': field 3 is the first.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |field: usize| Some(f.get(field - 3)?.parse::<u64>().ok()? as f64 / TICKS_PER_SEC);
    Some([tick(14)?, tick(15)?, tick(16)?, tick(17)?])
}

/// User + system CPU seconds of this process so far, all threads, or 0.
pub fn own_cpu_secs() -> f64 {
    times().map_or(0.0, |t| t[0] + t[1])
}

/// (user, system) CPU seconds of this process's children that have ended and been waited for,
/// and of their own waited-for descendants (getrusage(2), `RUSAGE_CHILDREN`), or `None`.
pub fn children_cpu_secs() -> Option<(f64, f64)> {
    times().map(|t| (t[2], t[3]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_waited_for_child_s_cpu_is_counted() {
        let Some((u0, s0)) = super::children_cpu_secs() else {
            return; // no /proc here
        };
        // A child with a fixed amount of work (a tenth of a second or more of CPU: ticks are
        // 1/100 s), whatever the machine's load.
        let st = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh runs");
        assert!(st.success());
        let (u1, s1) = super::children_cpu_secs().expect("still there");
        // The child's work (about half a second of CPU on the 2-core machine), not this
        // process's own, which only waits meanwhile.
        assert!(
            u1 + s1 - (u0 + s0) >= 0.1,
            "the child's CPU time shows: {u0}+{s0} -> {u1}+{s1}"
        );
        assert!(super::own_cpu_secs() >= 0.0);
    }
}
