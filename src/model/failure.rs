//! A benchmark that failed, as data: the others still run and are reported, the text
//! report names it after the table (`FAILED: label: error`), the JSON report leaves it
//! out of its entries (as JMH does) and lists it in the first entry's `boardbench.failed`.

/// One failed benchmark: its label and its error's message.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub benchmark: String,
    pub error: String,
}
