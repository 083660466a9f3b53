//! Exact set-similarity join (to be written).
