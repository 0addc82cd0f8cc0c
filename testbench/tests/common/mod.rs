//! Helpers shared by the testbench's integration tests.

/// (scope, name, value at time `at`) of every variable in a VCD, read with the vcd crate.
pub fn parse_vcd(text: &[u8], at: u64) -> Vec<(String, String, u64)> {
    use vcd::{Command, ScopeItem};
    let mut parser = vcd::Parser::new(text);
    let header = parser.parse_header().unwrap();
    fn walk(items: &[ScopeItem], scope: &str, out: &mut Vec<(String, String, vcd::IdCode)>) {
        for it in items {
            match it {
                ScopeItem::Var(v) => out.push((scope.to_string(), v.reference.clone(), v.code)),
                ScopeItem::Scope(s) => walk(&s.children, &s.identifier, out),
            }
        }
    }
    let mut ids = vec![];
    for it in &header.items {
        if let ScopeItem::Scope(s) = it {
            for child in &s.children {
                match child {
                    ScopeItem::Var(v) => ids.push(("top".to_string(), v.reference.clone(), v.code)),
                    ScopeItem::Scope(c) => walk(&c.children, &c.identifier, &mut ids),
                }
            }
        }
    }
    let mut values = std::collections::HashMap::new();
    for cmd in parser {
        match cmd.unwrap() {
            Command::Timestamp(t) if t > at => break,
            Command::ChangeScalar(id, v) => {
                values.insert(id, (v == vcd::Value::V1) as u64);
            }
            Command::ChangeVector(id, bits) => {
                values.insert(
                    id,
                    bits.iter()
                        .fold(0u64, |a, b| a << 1 | (*b == vcd::Value::V1) as u64),
                );
            }
            _ => {}
        }
    }
    ids.into_iter()
        .map(|(s, n, id)| (s, n, values.get(&id).copied().unwrap_or(0)))
        .collect()
}
