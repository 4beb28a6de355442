"""Documents: a file store with sharing, and collaborative documents with comments."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "documents"


def files() -> ServiceSpec:
    b = ServiceBuilder("files", "Files", "documents", "A cloud file store with folders and sharing.", MODULE)
    b.entity("Folder", "fold", "A folder of files.",
             field("path", "file_path"),
             field("owner_email", "email"),
             field("created_at", "datetime"))
    b.entity("File", "file", "A stored file.",
             field("path", "file_path"),
             field("folder_id", "files.Folder.id"),
             field("mime_type", enum=["application/pdf", "text/plain", "image/png", "text/csv",
                                      "application/vnd.ms-excel"]),
             field("size_bytes", "integer"),
             field("owner_email", "email"),
             field("download_url", "url"),
             field("modified_at", "datetime"),
             field("starred", "boolean"))
    b.entity("Share", "shr", "Access to a file granted to a person.",
             field("file_id", "files.File.id"),
             field("shared_with", "email"),
             field("permission", enum=["view", "comment", "edit"]),
             field("shared_at", "datetime"))
    b.crud("File")
    b.update_as("star_file", "File", "Star a file.", sets={"starred": True})
    b.update_as("move_file", "File", "Move a file to another folder and path.", params=("folder_id", "path"),
                required=("folder_id", "path"))
    b.crud("Folder", "CRLD")
    b.create_as("share_file", "Share", "Share a file with a person.")
    b.crud("Share", "LUD")
    return b.build()


def docs() -> ServiceSpec:
    b = ServiceBuilder("docs", "Docs", "documents", "Collaborative documents with review comments.", MODULE)
    b.entity("Document", "doc", "A text document.",
             field("title"),
             field("body"),
             field("author_email", "email"),
             field("file_path", "file_path"),
             field("status", enum=["draft", "in_review", "published", "archived"]),
             field("project_id", "projects.Project.id", required=False),
             field("updated_at", "datetime"))
    b.entity("Comment", "cmt", "A review comment on a document.",
             field("document_id", "docs.Document.id"),
             field("author_email", "email"),
             field("text"),
             field("resolved", "boolean"),
             field("created_at", "datetime"))
    b.crud("Document")
    b.update_as("request_review", "Document", "Send a document for review.", sets={"status": "in_review"})
    b.update_as("publish_document", "Document", "Publish a document.", sets={"status": "published"})
    b.update_as("archive_document", "Document", "Archive a document.", sets={"status": "archived"})
    b.create_as("add_comment", "Comment", "Comment on a document.", sets={"resolved": False})
    b.crud("Comment", "LD")
    b.update_as("resolve_comment", "Comment", "Mark a comment as resolved.", sets={"resolved": True})
    b.query("summarize_document", "Write a short abstractive summary of a document.",
             [field("document_id", "docs.Document.id"), field("max_words", "integer", required=False)],
             [field("summary")])
    return b.build()


def services() -> list[ServiceSpec]:
    return [files(), docs()]
