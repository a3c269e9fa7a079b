//! Shared test helpers of the formats (see mod.rs).
