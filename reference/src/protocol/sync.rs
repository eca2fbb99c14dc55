//! The sync shim: every atomic, cell, fence, mutex, thread spawn and yield of the engine goes
//! through this module, so one source compiles against std (default), loom (`--cfg loom`) or
//! shuttle (`--cfg shuttle`). Orderings pass through unchanged to std and loom: the shim never
//! strengthens or weakens what the engine asks for (left-right's old loom shim silently weakened
//! `fence(SeqCst)`; see docs/protocol.md, "Checkers"). shuttle, which runs every atomic
//! operation as `SeqCst` whatever it is given, is handed `SeqCst` (`seq_cst` below).
//!
//! Layout follows tokio's `src/loom/` and crossbeam's `primitive` module.

#[cfg(all(loom, shuttle))]
compile_error!("build with at most one of --cfg loom and --cfg shuttle");

/// True when a model checker (loom or shuttle) drives the engine, or in debug builds. Checked
/// builds keep freed objects in a graveyard (poisoned) instead of returning them to the
/// allocator, so a read after free is an assertion failure rather than undefined behaviour.
pub const CHECKED: bool = cfg!(any(loom, shuttle, debug_assertions));

#[cfg(loom)]
mod imp {
    pub use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
    pub use loom::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use loom::thread::{spawn, yield_now, JoinHandle};

    /// loom's cell: every access is checked for causality against every other access.
    #[derive(Debug)]
    pub struct UnsafeCell<T>(loom::cell::UnsafeCell<T>);
    impl<T> UnsafeCell<T> {
        #[track_caller]
        pub fn new(v: T) -> Self {
            Self(loom::cell::UnsafeCell::new(v))
        }
        #[track_caller]
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            self.0.with(f)
        }
        #[track_caller]
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            self.0.with_mut(f)
        }
    }

    pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().expect("bpspec mutex poisoned")
    }
}

#[cfg(shuttle)]
mod imp {
    pub use super::seq_cst::{
        alone, fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
    };
    pub use shuttle::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use shuttle::thread::{spawn, yield_now, JoinHandle};
    pub use std_cell::UnsafeCell;

    pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().expect("bpspec mutex poisoned")
    }

    mod std_cell {
        pub use crate::sync::std_unsafe_cell::UnsafeCell;
    }
}

/// The engine's atomics under shuttle: std's atomics behind shuttle's scheduling point.
///
/// shuttle-std 0.1.5's atomics (`src/sync/atomic/mod.rs`) do three things per operation: warn
/// about any ordering but `SeqCst` (a compare-exchange on a process-wide flag), call
/// `thread::switch()` (the scheduling point: shuttle-engine 0.1.7's `ExecutionState::maybe_yield`
/// asks the scheduler which task runs next), and keep vector clocks (read only through
/// `shuttle::current::clock`, which bpspec never calls). The value itself is a plain cell, every
/// operation `SeqCst`, on the one OS thread that runs all of an execution's tasks. The shim keeps
/// what decides the schedules and drops the rest:
///
/// - **The scheduling point** is [`gate`]: shuttle-engine's own `thread::switch()` before every
///   load, store, swap, compare-exchange and fetch, where shuttle-std places it, unless the
///   calling task is the execution's only unfinished task (the main task before its first spawn,
///   or after every task it spawned finished). There `ExecutionState::schedule`, which offers the
///   live runnable tasks, could offer only the caller: the point is a decision with one choice,
///   and skipping it removes no interleaving. 40 % of the atomic operations of the shuttle
///   baselines run there (a scenario's setup and its checks at rest; docs/perf.md, "shuttle's
///   per-iteration cost"). While the execution tears down, or a task unwinds a panic (shuttle
///   has bookkeeping of its own for both in `maybe_yield`), the point is always taken.
/// - **Orderings:** shuttle models `SeqCst` only, and the std atomic is handed `SeqCst`.
/// - **Fences** were no-ops in shuttle-std ("SeqCst fences are no-ops in our execution model")
///   and stay so: no scheduling point.
///
/// loom gets the engine's orderings unchanged, and so does std.
#[cfg(shuttle)]
mod seq_cst {
    use shuttle_engine::runtime::execution::ExecutionState;
    use std::sync::atomic as a;
    use std::sync::atomic::Ordering::{self, SeqCst};

    pub use self::seq_cst_fence as fence;

    /// The scheduling point before an atomic operation (see the module's comment).
    #[inline]
    pub fn gate() {
        if !alone() {
            shuttle_engine::runtime::thread::switch();
        }
    }

    /// Whether the calling task is the only unfinished task of its execution, outside teardown
    /// and unwinding. shuttle-engine (vendored, vendor/README.md) answers from its own list of
    /// unfinished tasks (`live_tasks`) instead of a visit of every task the execution made.
    pub fn alone() -> bool {
        ExecutionState::with(|s| !std::thread::panicking() && s.current_is_only_live_task())
    }

    /// A fence: a no-op in shuttle's model (every operation is `SeqCst`), as in shuttle-std.
    pub fn seq_cst_fence(o: Ordering) {
        assert!(
            o != Ordering::Relaxed,
            "there is no such thing as a relaxed fence"
        );
    }

    macro_rules! atomic {
        ($name:ident, $t:ty $(, $fetch:ident)*) => {
            /// std's atomic of the same name behind shuttle's scheduling point, every operation
            /// as `SeqCst`.
            #[derive(Debug)]
            pub struct $name(a::$name);
            impl $name {
                pub const fn new(v: $t) -> Self {
                    Self(a::$name::new(v))
                }
                pub fn get_mut(&mut self) -> &mut $t {
                    self.0.get_mut()
                }
                pub fn into_inner(self) -> $t {
                    self.0.into_inner()
                }
                #[inline]
                pub fn load(&self, _: Ordering) -> $t {
                    gate();
                    self.0.load(SeqCst) // ordering: pass-through (shuttle models SeqCst only)
                }
                #[inline]
                pub fn store(&self, v: $t, _: Ordering) {
                    gate();
                    self.0.store(v, SeqCst) // ordering: pass-through
                }
                #[inline]
                pub fn swap(&self, v: $t, _: Ordering) -> $t {
                    gate();
                    self.0.swap(v, SeqCst) // ordering: pass-through
                }
                #[inline]
                pub fn compare_exchange(
                    &self,
                    current: $t,
                    new: $t,
                    _: Ordering,
                    _: Ordering,
                ) -> Result<$t, $t> {
                    gate();
                    self.0.compare_exchange(current, new, SeqCst, SeqCst) // ordering: pass-through
                }
                $(
                    #[inline]
                    pub fn $fetch(&self, v: $t, _: Ordering) -> $t {
                        gate();
                        self.0.$fetch(v, SeqCst) // ordering: pass-through
                    }
                )*
            }
        };
    }
    atomic!(AtomicBool, bool, fetch_or, fetch_and);
    atomic!(AtomicU32, u32, fetch_add, fetch_sub, fetch_or, fetch_and);
    atomic!(AtomicU64, u64, fetch_add, fetch_sub, fetch_or, fetch_and);
    atomic!(
        AtomicUsize,
        usize,
        fetch_add,
        fetch_sub,
        fetch_or,
        fetch_and
    );

    /// std's `AtomicPtr` behind shuttle's scheduling point, every operation as `SeqCst`.
    #[derive(Debug)]
    pub struct AtomicPtr<T>(a::AtomicPtr<T>);
    impl<T> AtomicPtr<T> {
        pub const fn new(v: *mut T) -> Self {
            Self(a::AtomicPtr::new(v))
        }
        pub fn get_mut(&mut self) -> &mut *mut T {
            self.0.get_mut()
        }
        pub fn into_inner(self) -> *mut T {
            self.0.into_inner()
        }
        #[inline]
        pub fn load(&self, _: Ordering) -> *mut T {
            gate();
            self.0.load(SeqCst) // ordering: pass-through
        }
        #[inline]
        pub fn store(&self, v: *mut T, _: Ordering) {
            gate();
            self.0.store(v, SeqCst) // ordering: pass-through
        }
        #[inline]
        pub fn swap(&self, v: *mut T, _: Ordering) -> *mut T {
            gate();
            self.0.swap(v, SeqCst) // ordering: pass-through
        }
        #[inline]
        pub fn compare_exchange(
            &self,
            current: *mut T,
            new: *mut T,
            _: Ordering,
            _: Ordering,
        ) -> Result<*mut T, *mut T> {
            gate();
            self.0.compare_exchange(current, new, SeqCst, SeqCst) // ordering: pass-through
        }
    }
}

#[cfg(not(any(loom, shuttle)))]
mod imp {
    pub use super::std_unsafe_cell::UnsafeCell;
    pub use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
    pub use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use std::thread::{spawn, yield_now, JoinHandle};

    pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(not(loom))]
mod std_unsafe_cell {
    /// std's `UnsafeCell` behind loom's closure API (tokio's `std/unsafe_cell.rs`).
    #[derive(Debug)]
    pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);
    impl<T> UnsafeCell<T> {
        pub fn new(v: T) -> Self {
            Self(std::cell::UnsafeCell::new(v))
        }
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

pub use imp::*;
pub use std::sync::atomic::Ordering;

/// Shared side of an [`RwLock`] (a scheduler inside a call, `load.rs`'s stop-the-world model).
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Exclusive side of an [`RwLock`]: granted once no reader is inside (the blocking loader's
/// `erts_thr_progress_block`, `load.rs`).
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

use crate::mutant::Mutant;
use crate::ordering::Site;

/// The ordering the engine asks for at `site`: `o`, or `Relaxed` under the mutant that weakens
/// this site. Constant `o` in release builds (the test is on [`CHECKED`]).
#[inline(always)]
pub fn ord(mutant: Option<Mutant>, site: Site, o: Ordering) -> Ordering {
    if CHECKED && mutant == Some(Mutant::Weaken(site)) {
        Ordering::Relaxed
    } else {
        o
    }
}

/// A fence at `site`, left out under the mutant that weakens this site, and only its release
/// side (`fence(Release)`) under the mutant that keeps that much of it
/// ([`Mutant::release_only_site`]). A plain fence in release builds.
#[inline(always)]
pub fn fence_at(mutant: Option<Mutant>, site: Site, o: Ordering) {
    if CHECKED && mutant == Some(Mutant::Weaken(site)) {
        return;
    }
    if CHECKED && mutant.and_then(Mutant::release_only_site) == Some(site) {
        fence(Ordering::Release); // ordering: pass-through (the mutant of the caller's site)
        return;
    }
    fence(o); // ordering: pass-through (the site is the caller's)
}
