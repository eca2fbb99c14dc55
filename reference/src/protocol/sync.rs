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
    pub use super::seq_cst::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
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

/// shuttle's atomics behind the std API, every operation handed to shuttle as `SeqCst`.
///
/// shuttle runs every atomic operation as `SeqCst` whatever ordering it is given: in
/// shuttle-std 0.1.5 (`src/sync/atomic/mod.rs`) the ordering goes only to
/// `maybe_warn_about_ordering`, which for any other ordering does a compare-exchange on a
/// process-wide flag in every load, store, swap and update, about 4.5 % of a shuttle run
/// (docs/running.md, "Per-execution cost"). Handing it `SeqCst` skips that and nothing else, so
/// shuttle explores the same schedules (same seeds, same first killing iteration). loom gets
/// the engine's orderings unchanged, and so does std.
#[cfg(shuttle)]
mod seq_cst {
    use shuttle::sync::atomic as s;
    use std::sync::atomic::Ordering::{self, SeqCst};

    pub use self::seq_cst_fence as fence;

    /// A fence: a no-op in shuttle's model (every operation is `SeqCst`).
    pub fn seq_cst_fence(o: Ordering) {
        assert!(
            o != Ordering::Relaxed,
            "there is no such thing as a relaxed fence"
        );
        s::fence(SeqCst); // ordering: pass-through (shuttle models SeqCst only)
    }

    macro_rules! atomic {
        ($name:ident, $t:ty $(, $fetch:ident)*) => {
            /// shuttle's atomic of the same name, every operation as `SeqCst`.
            #[derive(Debug)]
            pub struct $name(s::$name);
            impl $name {
                /// `#[track_caller]`: shuttle signs each atomic with its creator's location.
                #[track_caller]
                pub const fn new(v: $t) -> Self {
                    Self(s::$name::new(v))
                }
                pub fn get_mut(&mut self) -> &mut $t {
                    self.0.get_mut()
                }
                pub fn into_inner(self) -> $t {
                    self.0.into_inner()
                }
                #[inline]
                pub fn load(&self, _: Ordering) -> $t {
                    self.0.load(SeqCst) // ordering: pass-through
                }
                #[inline]
                pub fn store(&self, v: $t, _: Ordering) {
                    self.0.store(v, SeqCst) // ordering: pass-through
                }
                #[inline]
                pub fn swap(&self, v: $t, _: Ordering) -> $t {
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
                    self.0.compare_exchange(current, new, SeqCst, SeqCst) // ordering: pass-through
                }
                $(
                    #[inline]
                    pub fn $fetch(&self, v: $t, _: Ordering) -> $t {
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

    /// shuttle's `AtomicPtr`, every operation as `SeqCst`.
    #[derive(Debug)]
    pub struct AtomicPtr<T>(s::AtomicPtr<T>);
    impl<T> AtomicPtr<T> {
        /// `#[track_caller]`: as for the other atomics.
        #[track_caller]
        pub const fn new(v: *mut T) -> Self {
            Self(s::AtomicPtr::new(v))
        }
        pub fn get_mut(&mut self) -> &mut *mut T {
            self.0.get_mut()
        }
        pub fn into_inner(self) -> *mut T {
            self.0.into_inner()
        }
        #[inline]
        pub fn load(&self, _: Ordering) -> *mut T {
            self.0.load(SeqCst) // ordering: pass-through
        }
        #[inline]
        pub fn store(&self, v: *mut T, _: Ordering) {
            self.0.store(v, SeqCst) // ordering: pass-through
        }
        #[inline]
        pub fn swap(&self, v: *mut T, _: Ordering) -> *mut T {
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
