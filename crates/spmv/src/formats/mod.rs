//! Storage formats.
