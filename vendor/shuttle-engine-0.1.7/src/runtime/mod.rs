pub mod execution;
mod failure;
pub mod runner;
pub mod storage;
pub mod task;
pub mod thread;
