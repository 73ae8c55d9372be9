//! The configuration file: every setting of the environment, in TOML, for a city that keeps
//! its settings in `/etc` rather than in a unit's environment.
//!
//! Flow: `--config FILE` (or `TAXI_FISCAL_CONFIG`) names the file; [`FileSettings::load`] reads
//! it (at most [`MAX_CONFIG_FILE_BYTES`]) and refuses an unknown key or a value of the wrong
//! kind, naming the key. Each key is a `TAXI_FISCAL_*` variable without its prefix, in lower
//! case (`upload_timeout_secs` is `TAXI_FISCAL_UPLOAD_TIMEOUT_SECS`); lists (`public_url`,
//! `trusted_proxies`) may be TOML arrays. [`Sources::get`] answers a variable from the
//! environment first, then the file; flags on the command line come before both. Every value
//! then goes through the same checks as its variable.
//!
//! ```toml
//! data = "/var/lib/taxi-fiscal"
//! listen = "127.0.0.1:8080"
//! public_url = "https://taxi.americana.sp.gov.br"
//! trusted_proxies = ["127.0.0.1", "::1"]
//! upload_timeout_secs = 300
//! log_format = "json"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ConfigError;

/// The keys a configuration file may hold (each the variable `TAXI_FISCAL_` + its upper case).
pub const KEYS: &[&str] = &[
    "data",
    "database_url",
    "listen",
    "public_url",
    "trusted_proxies",
    "tls_cert",
    "tls_key",
    "jwt_secret",
    "body_limit",
    "upload_timeout_secs",
    "auth_address_burst",
    "notice_authority",
    "notice_filing_place",
    "metrics_token",
    "log",
    "log_format",
];

/// Largest configuration file read: a few hundred bytes of settings; anything near this is not
/// a configuration file.
pub const MAX_CONFIG_FILE_BYTES: u64 = 64 * 1024;

/// The settings of a configuration file, as the text their variables would hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSettings {
    values: BTreeMap<String, String>,
}

impl FileSettings {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let fail = |reason: String| ConfigError::File {
            path: path.to_owned(),
            reason,
        };
        let len = std::fs::metadata(path)
            .map_err(|e| fail(e.to_string()))?
            .len();
        if len > MAX_CONFIG_FILE_BYTES {
            return Err(fail(format!(
                "o arquivo tem {len} bytes, mais que o limite de {MAX_CONFIG_FILE_BYTES}"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(&text).map_err(fail)
    }

    /// Checks a file's text; the reason names the key at fault.
    pub fn parse(text: &str) -> Result<Self, String> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| e.message().to_owned())?;
        let mut values = BTreeMap::new();
        for (key, value) in table {
            if !KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "chave desconhecida {key:?} (as válidas: {})",
                    KEYS.join(", ")
                ));
            }
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Array(items) => items
                    .into_iter()
                    .map(|i| match i {
                        toml::Value::String(s) => Ok(s),
                        _ => Err(format!("{key}: a lista só pode ter textos")),
                    })
                    .collect::<Result<Vec<_>, _>>()?
                    .join(","),
                _ => return Err(format!("{key}: esperado um texto, um número ou uma lista")),
            };
            values.insert(key, text);
        }
        Ok(Self { values })
    }

    /// The value for the variable `var` (`TAXI_FISCAL_…`), if the file sets it.
    pub fn get(&self, var: &str) -> Option<String> {
        let key = var.strip_prefix("TAXI_FISCAL_")?.to_ascii_lowercase();
        self.values.get(&key).cloned()
    }
}

/// Where a setting comes from after the flags: the environment, then the file.
pub struct Sources<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    file: FileSettings,
}

impl std::fmt::Debug for Sources<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// The process environment, as [`Sources`] reads it (an empty variable is unset).
pub fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

impl<'a> Sources<'a> {
    pub fn new(env: &'a dyn Fn(&str) -> Option<String>, file: FileSettings) -> Self {
        Self { env, file }
    }

    /// The process environment and the file `config` names (`--config`), or
    /// `TAXI_FISCAL_CONFIG`'s, or none.
    pub fn from_process(config: Option<PathBuf>) -> Result<Sources<'static>, ConfigError> {
        let path = config.or_else(|| process_env("TAXI_FISCAL_CONFIG").map(PathBuf::from));
        let file = match path {
            Some(p) => FileSettings::load(&p)?,
            None => FileSettings::default(),
        };
        Ok(Sources::new(&process_env, file))
    }

    /// The setting `var`: the environment's, else the file's.
    pub fn get(&self, var: &str) -> Option<String> {
        (self.env)(var).or_else(|| self.file.get(var))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_variables_without_their_prefix() {
        let f = FileSettings::parse(
            "listen = \"127.0.0.1:9000\"\nupload_timeout_secs = 600\n\
             trusted_proxies = [\"127.0.0.1\", \"::1\"]\n",
        )
        .unwrap();
        assert_eq!(f.get("TAXI_FISCAL_LISTEN").unwrap(), "127.0.0.1:9000");
        assert_eq!(f.get("TAXI_FISCAL_UPLOAD_TIMEOUT_SECS").unwrap(), "600");
        assert_eq!(
            f.get("TAXI_FISCAL_TRUSTED_PROXIES").unwrap(),
            "127.0.0.1,::1"
        );
        assert_eq!(f.get("TAXI_FISCAL_BODY_LIMIT"), None);
        assert_eq!(f.get("LISTEN"), None);
    }

    #[test]
    fn an_unknown_key_or_a_wrong_kind_is_named() {
        let e = FileSettings::parse("lisen = \"x\"").unwrap_err();
        assert!(e.contains("\"lisen\"") && e.contains("listen"), "{e}");
        let e = FileSettings::parse("log_format = true").unwrap_err();
        assert!(e.contains("log_format"), "{e}");
        let e = FileSettings::parse("trusted_proxies = [1, 2]").unwrap_err();
        assert!(e.contains("trusted_proxies"), "{e}");
        assert!(FileSettings::parse("listen = ").is_err());
    }

    #[test]
    fn the_environment_comes_before_the_file() {
        let file = FileSettings::parse("listen = \"127.0.0.1:1\"\nlog = \"debug\"").unwrap();
        let env = |var: &str| (var == "TAXI_FISCAL_LISTEN").then(|| String::from("127.0.0.1:2"));
        let s = Sources::new(&env, file);
        assert_eq!(s.get("TAXI_FISCAL_LISTEN").unwrap(), "127.0.0.1:2");
        assert_eq!(s.get("TAXI_FISCAL_LOG").unwrap(), "debug");
        assert_eq!(s.get("TAXI_FISCAL_DATA"), None);
    }

    /// The example the README and the unit point to is a valid configuration.
    #[test]
    fn the_example_in_deploy_is_valid() {
        let f = FileSettings::parse(include_str!("../../../deploy/taxi-fiscal.toml")).unwrap();
        let none = |_: &str| None;
        let c = crate::Config::resolve_from(
            PathBuf::from("/var/lib/taxi-fiscal"),
            None,
            &Sources::new(&none, f),
        )
        .unwrap();
        assert_eq!(c.public_origins, ["https://taxi.americana.sp.gov.br"]);
    }

    #[test]
    fn a_file_over_the_limit_is_refused_at_its_edge() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("taxi-fiscal.toml");
        let mut text = String::from("listen = \"127.0.0.1:8080\"\n#");
        text.push_str(&"x".repeat(MAX_CONFIG_FILE_BYTES as usize - text.len()));
        assert_eq!(text.len() as u64, MAX_CONFIG_FILE_BYTES);
        std::fs::write(&path, &text).unwrap();
        assert!(FileSettings::load(&path).is_ok());
        text.push('x');
        std::fs::write(&path, &text).unwrap();
        let e = FileSettings::load(&path).unwrap_err();
        assert!(e.to_string().contains("limite"), "{e}");
    }
}
