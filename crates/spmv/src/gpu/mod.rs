//! GPU runtime.
