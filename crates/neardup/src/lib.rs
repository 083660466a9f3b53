//! placeholder
pub mod exact;
pub mod verify;
