//! `trace_info/2` for the items this engine implements (`traced`, `call_count`), with ERTS's
//! result shapes. Holds the code modification permission, as OTP 29's `trace_info` does.

use crate::bp::{flags, SessionId};
use crate::code::Mfa;
use crate::engine::Engine;
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;

/// `trace_info` item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoItem {
    Traced,
    CallCount,
}

/// `trace_info` result value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoValue {
    /// The function does not exist.
    Undefined,
    /// Not traced (for this item / session).
    False,
    /// `{traced, local}`.
    Local,
    /// `{call_count, N}` (also when paused).
    Count(u64),
}

impl<P: ThreadProgress> Engine<P> {
    pub fn trace_info(&self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.static_entry("trace_info");
        let Some(f) = self.func(mfa) else {
            return InfoValue::Undefined;
        };
        self.trace_info_item_in(crate::export::Area::Code, session, f, item)
    }

    /// [`Engine::trace_info`] of function `f` of `area` (the static area's code, or a
    /// version's, [`Engine::trace_info_item_version_in`]): the active half of `session`'s
    /// node, read under the permission.
    pub(crate) fn trace_info_item_in(
        &self,
        area: crate::export::Area,
        session: SessionId,
        f: crate::code::FuncId,
        item: InfoItem,
    ) -> InfoValue {
        let st = self.seize();
        let g = self.session_node_in(&st, area, f, session, false);
        if g.is_null() {
            return InfoValue::False;
        }
        // SAFETY: live node under the permission.
        let d = unsafe { &*g }.snapshot_half(self.active_ix());
        match item {
            InfoItem::Traced if d.flags & flags::LOCAL_TRACE != 0 => InfoValue::Local,
            InfoItem::Traced => InfoValue::False,
            InfoItem::CallCount => match (&d.count, d.flags & flags::COUNT != 0) {
                (Some(c), true) => InfoValue::Count(c.acount.load(Relaxed)),
                _ => InfoValue::False,
            },
        }
    }
}
