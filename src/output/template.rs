//! `-o jsonpath=…`, `-o custom-columns=…` and their `-file` forms: kubectl's templates run over the
//! very document `-o json` prints (docs/output.md). Rendering first to JSON, then to a
//! `serde_json::Value`, costs a copy of the document: these formats are for scripts, and the other
//! formats do not pay for it.

use serde_json::Value;

use super::jsonpath::{JsonPath, TemplateError};

/// A parsed `-o` template.
#[derive(Clone, Debug, PartialEq)]
pub enum Template {
    /// `-o jsonpath=…`: the template's text, run once over the document.
    JsonPath(JsonPath),
    /// `-o custom-columns=…`: a table, one row per item.
    CustomColumns(CustomColumns),
}

impl Template {
    /// The format's name: `jsonpath` or `custom-columns`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::JsonPath(_) => "jsonpath",
            Self::CustomColumns(_) => "custom-columns",
        }
    }
}

/// Columns of a custom-columns table: a header and a JSONPath each.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomColumns {
    columns: Vec<(String, JsonPath)>,
}

impl CustomColumns {
    /// `NAME:.path,OTHER:.path2`, as kubectl reads it.
    ///
    /// # Errors
    /// No columns, a column without `:`, a path kubectl would refuse.
    pub fn from_spec(spec: &str) -> Result<Self, TemplateError> {
        if spec.is_empty() {
            return Err(TemplateError("custom-columns format specified but no custom columns given".into()));
        }
        let mut columns = Vec::new();
        for part in spec.split(',') {
            let Some((header, path)) = part.split_once(':') else {
                return Err(TemplateError(format!(
                    "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                )));
            };
            columns.push((header.to_owned(), relaxed(path)?));
        }
        Ok(Self { columns })
    }

    /// A file's text: the headers on the first line, the paths on the second, separated by
    /// whitespace.
    ///
    /// # Errors
    /// A missing line, or as many headers as paths not given.
    pub fn from_file(text: &str) -> Result<Self, TemplateError> {
        let expected =
            "Expected format is one line of space separated headers, one line of space separated column specs.";
        let mut lines = text.lines();
        let Some(headers) = lines.next() else {
            return Err(TemplateError(format!("invalid template, missing header line. {expected}")));
        };
        let Some(paths) = lines.next() else {
            return Err(TemplateError(format!("invalid template, missing spec line. {expected}")));
        };
        let (headers, paths): (Vec<&str>, Vec<&str>) =
            (headers.split_whitespace().collect(), paths.split_whitespace().collect());
        if headers.len() != paths.len() {
            return Err(TemplateError(format!(
                "number of headers ({}) and field specifications ({}) don't match",
                headers.len(),
                paths.len()
            )));
        }
        let columns =
            headers.iter().zip(&paths).map(|(h, p)| Ok(((*h).to_owned(), relaxed(p)?))).collect::<Result<_, _>>()?;
        Ok(Self { columns })
    }

    /// One row: each column's values in `item`.
    fn row(&self, item: &Value) -> Result<Vec<String>, TemplateError> {
        self.columns.iter().map(|(_, path)| path.cell(item)).collect()
    }
}

/// A column's path as kubectl takes it: `metadata.name`, `.metadata.name`, `{metadata.name}` or
/// `{.metadata.name}`, all meaning `{.metadata.name}`.
fn relaxed(path: &str) -> Result<JsonPath, TemplateError> {
    if path.is_empty() {
        return JsonPath::parse("");
    }
    let body = path.strip_prefix('{').and_then(|p| p.strip_suffix('}')).unwrap_or(path);
    // A leading `.` is dropped unless it is all there is (`.` is `{..}`, as in kubectl).
    let inner = body.strip_prefix('.').filter(|rest| !rest.is_empty()).unwrap_or(body);
    if inner.is_empty() || inner.contains(['{', '}']) {
        return Err(TemplateError(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or \
             '{.name1.name2}'"
                .into(),
        ));
    }
    JsonPath::parse(&format!("{{.{inner}}}")).map(|p| p.allow_missing_keys(true))
}

/// Which parts of a document a custom-columns table has a row for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// The document itself (an explanation, a line of `plan -w`).
    Document,
    /// Each pod of each node (`.nodes[*].pods[*]` of a plan).
    PlanPods,
}

impl Rows {
    fn of(self, document: &Value) -> Vec<&Value> {
        match self {
            Self::Document => vec![document],
            Self::PlanPods => document["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|node| node["pods"].as_array().into_iter().flatten())
                .collect(),
        }
    }
}

/// Prints documents through a template; for a custom-columns table, the header comes once and the
/// columns only widen from one document to the next (`plan -w`), as kubectl's tables do.
#[derive(Clone, Debug)]
pub struct Printer {
    template: Template,
    headers: bool,
    widths: Vec<usize>,
}

/// The least width of a table's column, and the spaces after its widest cell (kubectl's).
const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

impl Printer {
    /// `headers`: a custom-columns table has its header line (`--no-headers` takes it away).
    #[must_use]
    pub fn new(template: Template, headers: bool) -> Self {
        Self { template, headers, widths: Vec::new() }
    }

    /// The format's name: `jsonpath` or `custom-columns`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.template.name()
    }

    /// What `document` prints as: nothing is returned when the template fails.
    ///
    /// # Errors
    /// The template failed on the document (a key not found, with missing keys refused).
    pub fn print(&mut self, document: &Value, rows: Rows) -> Result<Vec<u8>, TemplateError> {
        let mut out = Vec::new();
        match &self.template {
            Template::JsonPath(path) => path.execute(document, &mut out)?,
            Template::CustomColumns(columns) => {
                let mut lines = Vec::new();
                if self.headers {
                    lines.push(columns.columns.iter().map(|(header, _)| header.clone()).collect());
                    self.headers = false;
                }
                for item in rows.of(document) {
                    lines.push(columns.row(item)?);
                }
                self.align(&lines, &mut out);
            }
        }
        Ok(out)
    }

    /// Writes `lines` as tab-aligned columns: each cell but the last padded to its column's width.
    fn align(&mut self, lines: &[Vec<String>], out: &mut Vec<u8>) {
        let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
        self.widths.resize(self.widths.len().max(columns), 0);
        for line in lines {
            for (i, cell) in line.iter().enumerate().take(line.len().saturating_sub(1)) {
                let width = (cell.chars().count() + PADDING).max(MIN_WIDTH);
                self.widths[i] = self.widths[i].max(width);
            }
        }
        for line in lines {
            for (i, cell) in line.iter().enumerate() {
                out.extend_from_slice(cell.as_bytes());
                if i + 1 < line.len() {
                    out.extend(std::iter::repeat_n(b' ', self.widths[i] - cell.chars().count()));
                }
            }
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn table(spec: &str, rows: Rows, document: &Value) -> String {
        let template = Template::CustomColumns(CustomColumns::from_spec(spec).expect("a spec"));
        String::from_utf8(Printer::new(template, true).print(document, rows).expect("prints")).expect("UTF-8")
    }

    #[test]
    fn custom_columns_have_a_row_per_pod_of_a_plan() {
        let plan = json!({"nodes": [
            {"name": "n1", "pods": [{"name": "a", "verdict": "evict-now", "untolerated": [{"key": "k"}, {"key": "l"}]}]},
            {"name": "n2", "pods": [{"name": "bb", "verdict": "never", "untolerated": []}]},
        ]});
        assert_eq!(
            table("POD:.name,VERDICT:verdict,KEYS:{.untolerated[*].key}", Rows::PlanPods, &plan),
            "POD   VERDICT     KEYS\na     evict-now   k,l\nbb    never       <none>\n"
        );
        assert_eq!(table("KIND:{.kind}", Rows::Document, &json!({"kind": "X"})), "KIND\nX\n");
    }

    #[test]
    fn custom_columns_from_a_file_and_their_errors() {
        let columns = CustomColumns::from_file("NAME   VERDICT\n.name  {.verdict}\n").expect("a file");
        assert_eq!(columns.columns.len(), 2);
        let refused = |spec: &str| CustomColumns::from_spec(spec).expect_err(spec).0;
        assert_eq!(refused(""), "custom-columns format specified but no custom columns given");
        assert_eq!(refused("NAME"), "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>");
        assert!(refused("NAME:{.a}{.b}").starts_with("unexpected path string"));
        assert_eq!(refused("NAME:.a[0"), "unterminated array");
        let file = |text: &str| CustomColumns::from_file(text).expect_err(text).0;
        assert!(file("").starts_with("invalid template, missing header line."));
        assert!(file("A B\n").starts_with("invalid template, missing spec line."));
        assert_eq!(file("A B\n.a\n"), "number of headers (2) and field specifications (1) don't match");
    }

    #[test]
    fn columns_only_widen_from_one_document_to_the_next() {
        let template = Template::CustomColumns(CustomColumns::from_spec("TYPE:.type,POD:.pod").expect("spec"));
        let mut printer = Printer::new(template, true);
        let mut line = |document: Value| {
            String::from_utf8(printer.print(&document, Rows::Document).expect("prints")).expect("UTF-8")
        };
        assert_eq!(line(json!({"type": "synced"})), "TYPE     POD\nsynced   <none>\n");
        assert_eq!(line(json!({"type": "scheduled", "pod": "a"})), "scheduled   a\n");
        assert_eq!(line(json!({"type": "due", "pod": "b"})), "due         b\n");
    }
}
