//! Helpers shared by the oracle's integration tests (`mod common;` in each test file that uses
//! them; not every file uses every helper).
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeSet;

/// Every property name a JSON schema declares (the keys of each `properties` object, at any
/// depth): what the loader must accept, no more and no less.
pub fn schema_properties(schema: &Value) -> BTreeSet<String> {
    fn props(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(p)) = o.get("properties") {
                    out.extend(p.keys().cloned());
                }
                o.values().for_each(|x| props(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| props(x, out)),
            _ => {}
        }
    }
    let mut declared = BTreeSet::new();
    props(schema, &mut declared);
    declared
}
