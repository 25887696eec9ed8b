//! UsdSkel skinning (placeholder filled below).
