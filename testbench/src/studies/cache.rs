//! The reproductions' result cache (docs/memory-issue-control.md §8.4, docs/stall-inspector.md
//! §11): one folder per study, one file per computed point, named by the FNV-1a hash of its key
//! (code version and what decides the point), written atomically (a temporary file renamed into place), so an
//! interrupted run loses at most the points in flight. An entry is trusted only if its key,
//! its hash, its code version and the checksum of its result all match; anything else is
//! recomputed and overwritten.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable naming the cache directory.
pub const ENV: &str = "SMRTL_CACHE_DIR";

/// FNV-1a 64 of `bytes`, 16 hex digits (the sweep engine's `spec_id` hash).
pub fn fnv(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The code version: the crate version and the hash of the running executable, so any
/// rebuild that changes the code invalidates every entry.
pub fn code_version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let exe = std::env::current_exe()
            .and_then(std::fs::read)
            .map(|b| fnv(&b))
            .unwrap_or_else(|_| "unknown".into());
        format!("{}+{exe}", env!("CARGO_PKG_VERSION"))
    })
}

/// The default directory: `$SMRTL_CACHE_DIR`, else `$XDG_CACHE_HOME/smrtl`, else
/// `$HOME/.cache/smrtl`; `None` when none is set.
pub fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("smrtl")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("smrtl")))
}

/// How many entries a run reused and computed.
#[derive(Debug, Default)]
pub struct Tally {
    pub reused: AtomicU64,
    pub computed: AtomicU64,
}

impl Tally {
    pub fn get(&self) -> (u64, u64) {
        (
            self.reused.load(Ordering::Relaxed),
            self.computed.load(Ordering::Relaxed),
        )
    }
}

/// A cache directory (or none: `--no-cache`).
#[derive(Debug)]
pub struct Cache {
    dir: Option<PathBuf>,
}

static TMP: AtomicU64 = AtomicU64::new(0);

impl Cache {
    /// The cache of study `folder` in `dir` (created if missing); `None` disables it.
    pub fn open(dir: Option<&Path>, folder: &str) -> Result<Cache, String> {
        let Some(dir) = dir else {
            return Ok(Cache { dir: None });
        };
        let d = dir.join(folder);
        std::fs::create_dir_all(&d).map_err(|e| {
            format!(
                "cache directory {}: {e} (set {ENV} or pass --no-cache)",
                dir.display()
            )
        })?;
        Ok(Cache { dir: Some(d) })
    }

    pub fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// The key text of `parts` under this code version, and its hash.
    pub fn key(parts: &Value) -> (String, String) {
        let text = json!({"version": code_version(), "key": parts}).to_string();
        let hash = fnv(text.as_bytes());
        (text, hash)
    }

    fn path(&self, hash: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{hash}.json")))
    }

    /// The stored result of `key` if its entry checks out.
    fn load(&self, key: &str, hash: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.path(hash)?).ok()?;
        let e: Value = serde_json::from_str(&text).ok()?;
        let result = e.get("result")?;
        let ok = e.get("hash")? == hash
            && e.get("key")? == key
            && e.get("version")? == code_version()
            && fnv(key.as_bytes()) == hash
            && e.get("check")? == &fnv(result.to_string().as_bytes());
        ok.then(|| result.clone())
    }

    /// Writes the entry of `key` atomically; a failure only costs the reuse.
    fn store(&self, key: &str, hash: &str, result: &Value) {
        let Some(path) = self.path(hash) else {
            return;
        };
        let entry = json!({
            "hash": hash,
            "version": code_version(),
            "key": key,
            "check": fnv(result.to_string().as_bytes()),
            "result": result,
        });
        let n = TMP.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{hash}.{}.{n}.tmp", std::process::id()));
        if std::fs::write(&tmp, entry.to_string()).is_ok() && std::fs::rename(&tmp, &path).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&tmp);
    }

    /// The result of `parts`: the cached one if it checks out, else `compute`'s (stored).
    /// Returns it with the key's hash.
    pub fn get_or<T, F>(
        &self,
        parts: &Value,
        tally: &Tally,
        compute: F,
    ) -> Result<(T, String), String>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
        F: FnOnce() -> Result<T, String>,
    {
        let (key, hash) = Cache::key(parts);
        if let Some(v) = self.load(&key, &hash) {
            if let Ok(t) = serde_json::from_value(v) {
                tally.reused.fetch_add(1, Ordering::Relaxed);
                return Ok((t, hash));
            }
        }
        let t = compute()?;
        tally.computed.fetch_add(1, Ordering::Relaxed);
        if self.enabled() {
            let v = serde_json::to_value(&t).map_err(|e| e.to_string())?;
            self.store(&key, &hash, &v);
        }
        Ok((t, hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOLDER: &str = "a-study";

    #[test]
    fn entries_are_reused_and_bad_ones_recomputed() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(Some(dir.path()), FOLDER).unwrap();
        let t = Tally::default();
        let parts = json!({"w": "bp+sv", "s": "ws"});
        let (a, h): (Vec<f64>, String) = c.get_or(&parts, &t, || Ok(vec![0.25, 1.5])).unwrap();
        let (b, h2): (Vec<f64>, String) = c.get_or(&parts, &t, || Err("rerun".into())).unwrap();
        assert_eq!((a, &h), (b, &h2));
        assert_eq!(t.get(), (1, 1));
        // A tampered result no longer matches its checksum: recomputed.
        let p = c.path(&h).unwrap();
        let text = std::fs::read_to_string(&p).unwrap().replace("0.25", "0.5");
        std::fs::write(&p, text).unwrap();
        let (x, _): (Vec<f64>, String) = c.get_or(&parts, &t, || Ok(vec![9.0])).unwrap();
        assert_eq!(x, [9.0]);
        // An entry of another code version is not trusted either.
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace(code_version(), "0.0.0+old");
        std::fs::write(&p, text).unwrap();
        let (y, _): (Vec<f64>, String) = c.get_or(&parts, &t, || Ok(vec![7.0])).unwrap();
        assert_eq!(y, [7.0]);
        assert_eq!(t.get(), (1, 3));
        // No temporary files are left.
        let names: Vec<String> = std::fs::read_dir(dir.path().join(FOLDER))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{h}.json")]);
        // --no-cache computes every time.
        let off = Cache::open(None, FOLDER).unwrap();
        let (z, h3): (u8, String) = off.get_or(&parts, &t, || Ok(3)).unwrap();
        assert_eq!((z, h3), (3, h));
    }
}
