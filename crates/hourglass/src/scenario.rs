//! Scenarios.
use crate::config::RunConfig;
/// Load.
pub fn load(_p: &std::path::Path, _b: RunConfig, _d: bool) -> Result<RunConfig, String> {
    Err("todo".into())
}
