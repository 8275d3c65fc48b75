//! The chart template each rendered document came from, as `helm template` names it in the
//! `# Source: chart/templates/x.yaml` comment it writes after each `---` (docs/audit.md, "Rendered
//! manifests"). The YAML parser drops comments, so the text's lines are scanned apart from it: one
//! pass, and none at all when no line could be such a comment.

/// Each document's start (a `---` line, or the text's start) and the template its `# Source:` comment
/// names, if any, in the order of the text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateSources {
    documents: Vec<Document>,
}

/// One document of the text: where it starts, and its `# Source:` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Document {
    /// The line of its `---` (0 for the text's first document, which may have none).
    start: u32,
    /// The line of its first `# Source:` comment, and the template it names.
    source: Option<(u32, Box<str>)>,
}

/// What helm writes before the template's path.
const COMMENT: &str = "# Source: ";

/// Whether `line` starts a document: `---` alone, or before a blank.
fn separator(line: &str) -> bool {
    line.strip_prefix("---").is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

impl TemplateSources {
    /// The `# Source:` comments of `text`: the first one after each document's start.
    #[must_use]
    pub fn scan(text: &str) -> Self {
        if !text.contains(COMMENT) {
            return Self::default();
        }
        let mut documents = vec![Document { start: 0, source: None }];
        for (index, line) in text.lines().enumerate() {
            let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
            if separator(line) {
                documents.push(Document { start: number, source: None });
            } else if let Some(template) = line.strip_prefix(COMMENT)
                && let Some(Document { source: source @ None, .. }) = documents.last_mut()
            {
                *source = Some((number, template.trim_end().into()));
            }
        }
        Self { documents }
    }

    /// The template of the object that starts on `line` (from 1): its document's `# Source:`, when
    /// the comment comes before it.
    #[must_use]
    pub fn at(&self, line: u32) -> Option<&str> {
        let document = self.documents.partition_point(|document| document.start <= line).checked_sub(1)?;
        let (comment, template) = self.documents[document].source.as_ref()?;
        (*comment < line).then_some(&**template)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_object_has_its_documents_source_and_none_where_its_document_names_none() {
        let text = "\
kind: Namespace
---
# Source: shop/templates/web.yaml
kind: Deployment
---
# Source: shop/templates/empty.yaml
---
kind: Service
--- # Source: not/a/comment/on/its/own/line.yaml
# Source: shop/templates/job.yaml
kind: List
items:
- kind: Job
# Source: shop/templates/second.yaml
- kind: Pod
";
        let sources = TemplateSources::scan(text);
        let at = |line| sources.at(line);
        assert_eq!(at(1), None, "before any separator");
        assert_eq!(at(4), Some("shop/templates/web.yaml"));
        // A document of its comment only does not lend it to the next.
        assert_eq!(at(8), None);
        // The first comment after the start names the document, its List's items too.
        assert_eq!(
            (at(11), at(13), at(15)),
            (Some("shop/templates/job.yaml"), Some("shop/templates/job.yaml"), Some("shop/templates/job.yaml"))
        );
        // An object before its document's comment has none.
        assert_eq!(TemplateSources::scan("---\nkind: Pod\n# Source: late.yaml\n").at(2), None);
    }

    #[test]
    fn text_with_no_source_comment_is_not_scanned() {
        assert_eq!(TemplateSources::scan("---\nkind: Pod\n---\nkind: Job\n"), TemplateSources::default());
        assert_eq!(
            TemplateSources::scan("kind: Pod\r\n---\r\n# Source: a/templates/b.yaml\r\nkind: Job\r\n").at(4),
            Some("a/templates/b.yaml")
        );
    }
}
