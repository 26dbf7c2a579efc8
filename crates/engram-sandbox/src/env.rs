/// Variables a command inherits from this process: locale, terminal, time zone and the search
/// path. Nothing else crosses, so no credential of the agent's environment reaches a command.
const INHERITED: &[&str] = &["PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ"];

/// The environment of a command: the inherited harmless variables, then `extra` (which wins).
pub fn scrubbed_env(extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = INHERITED
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| ((*name).to_string(), value)))
        .collect();
    for (name, value) in extra {
        env.retain(|(n, _)| n != name);
        env.push((name.clone(), value.clone()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inherited_names_and_extras_cross() {
        let env = scrubbed_env(&[("CI".into(), "1".into())]);
        assert!(env.iter().all(|(n, _)| INHERITED.contains(&n.as_str()) || n == "CI"));
        assert!(env.contains(&("CI".into(), "1".into())));
    }
}
