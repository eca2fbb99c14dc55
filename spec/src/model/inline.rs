//! A fixed-capacity vector stored inline (no heap allocation), so that [`super::State`] is one
//! `Copy` block: cloning a state for a successor is a `memcpy`, and hashing it touches no pointer.
//!
//! It behaves as the `Vec` it replaces: equality, order and hash are those of the live elements
//! (`len` of them); the spare capacity is always `T::default()` and takes no part in them. The
//! capacities are constants of the state (`state.rs`); `Config::validate` refuses a model that
//! could outgrow them, so [`InlineVec::push`] past the capacity is a bug in the model (it panics).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

#[derive(Clone, Copy)]
pub struct InlineVec<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    pub fn new() -> Self {
        const { assert!(N <= u8::MAX as usize, "capacity fits the u8 length") };
        InlineVec {
            len: 0,
            items: [T::default(); N],
        }
    }

    /// `n` copies of `v`.
    pub fn filled(v: T, n: usize) -> Self {
        assert!(n <= N, "{n} elements exceed the capacity {N}");
        let mut s = Self::new();
        s.items[..n].fill(v);
        s.len = n as u8;
        s
    }

    /// Every slot, live or spare (the spare ones are `T::default()`): with the length, what
    /// [`super::State`]'s digest reads as whole words.
    pub fn raw(&self) -> &[T; N] {
        &self.items
    }

    pub fn push(&mut self, v: T) {
        let i = self.len as usize;
        assert!(i < N, "inline vector full (capacity {N})");
        self.items[i] = v;
        self.len += 1;
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len as usize]
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len as usize]
    }
}

impl<T: Copy + Default, const N: usize> Extend<T> for InlineVec<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, it: I) {
        for v in it {
            self.push(v);
        }
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut s = Self::new();
        s.extend(it);
        s
    }
}

impl<T: Copy + Default, const N: usize> IntoIterator for InlineVec<T, N> {
    type Item = T;
    type IntoIter = std::iter::Take<std::array::IntoIter<T, N>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len as usize)
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a mut InlineVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}

impl<T: Copy + Default + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: Copy + Default + PartialOrd, const N: usize> PartialOrd for InlineVec<T, N> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        (**self).partial_cmp(&**o)
    }
}

impl<T: Copy + Default + Ord, const N: usize> Ord for InlineVec<T, N> {
    fn cmp(&self, o: &Self) -> Ordering {
        (**self).cmp(&**o)
    }
}

impl<T: Copy + Default + Hash, const N: usize> Hash for InlineVec<T, N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// What the model's code needs of an inline list whose capacity is a parameter of the state
/// ([`super::state::Caps`]): [`InlineVec`] of any capacity is one.
pub trait Slots<T>:
    Copy
    + Default
    + fmt::Debug
    + Eq
    + Ord
    + Hash
    + Send
    + Sync
    + Deref<Target = [T]>
    + DerefMut
    + FromIterator<T>
    + Extend<T>
    + IntoIterator<Item = T>
    + 'static
{
    /// The capacity.
    const CAP: usize;
    fn new() -> Self;
    /// `n` copies of `v`.
    fn filled(v: T, n: usize) -> Self;
    fn push(&mut self, v: T);
    /// Every slot, live or spare (the spare ones are `T::default()`).
    fn raw(&self) -> &[T];
}

impl<T, const N: usize> Slots<T> for InlineVec<T, N>
where
    T: Copy + Default + fmt::Debug + Eq + Ord + Hash + Send + Sync + 'static,
{
    const CAP: usize = N;
    fn new() -> Self {
        InlineVec::new()
    }
    fn filled(v: T, n: usize) -> Self {
        InlineVec::filled(v, n)
    }
    fn push(&mut self, v: T) {
        InlineVec::push(self, v)
    }
    fn raw(&self) -> &[T] {
        InlineVec::raw(self)
    }
}

#[cfg(test)]
mod tests {
    use super::InlineVec;

    #[test]
    fn behaves_as_its_live_elements() {
        let mut a: InlineVec<u8, 4> = InlineVec::new();
        a.push(3);
        a.push(1);
        let b: InlineVec<u8, 4> = [3u8, 1].into_iter().collect();
        assert_eq!(a, b);
        assert_eq!(&*a, &[3, 1]);
        assert_eq!(a.into_iter().collect::<Vec<_>>(), vec![3, 1]);
        assert!(a < InlineVec::filled(3, 3));
        assert_eq!(format!("{a:?}"), "[3, 1]");
    }

    #[test]
    #[should_panic(expected = "inline vector full")]
    fn refuses_to_outgrow_its_capacity() {
        let mut a: InlineVec<u8, 1> = InlineVec::new();
        a.push(0);
        a.push(1);
    }
}
