"""Communication: an email mailbox and a team chat."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "communication"
FOLDERS = ["inbox", "sent", "drafts", "archive", "trash"]


def mail() -> ServiceSpec:
    b = ServiceBuilder("mail", "Mail", "communication",
                       "An email mailbox: send, draft, file and flag messages.", MODULE)
    b.entity("Message", "msg", "An email message.",
             field("to", "email", description="Recipient address."),
             field("sender", "email", description="Sender address."),
             field("cc", "email", required=False),
             field("subject"),
             field("body"),
             field("folder", enum=FOLDERS),
             field("is_read", "boolean"),
             field("starred", "boolean"),
             field("sent_at", "datetime"),
             field("attachment_path", "file_path", required=False),
             field("in_reply_to", "mail.Message.id", required=False))
    b.crud("Message", "RLSUD")
    b.create_as("send_email", "Message", "Send an email; it is filed in the sent folder.",
                sets={"folder": "sent", "is_read": True})
    b.create_as("draft_email", "Message", "Save an email as a draft.",
                sets={"folder": "drafts", "is_read": True})
    b.create_as("receive_email", "Message", "Deliver an incoming email to the inbox.",
                sets={"folder": "inbox", "is_read": False})
    b.update_as("archive_email", "Message", "Move a message to the archive.", sets={"folder": "archive"})
    b.update_as("trash_email", "Message", "Move a message to the trash.", sets={"folder": "trash"})
    b.update_as("move_email", "Message", "Move a message to another folder.", params=("folder",),
                required=("folder",))
    b.update_as("mark_read", "Message", "Mark a message as read.", sets={"is_read": True})
    b.update_as("mark_unread", "Message", "Mark a message as unread.", sets={"is_read": False})
    b.update_as("star_email", "Message", "Star a message.", sets={"starred": True})
    b.update_as("unstar_email", "Message", "Remove the star from a message.", sets={"starred": False})
    return b.build()


def chat() -> ServiceSpec:
    b = ServiceBuilder("chat", "Chat", "communication", "Team chat with channels, members and messages.",
                       MODULE)
    b.entity("Channel", "chan", "A chat channel.",
             field("name"),
             field("topic", required=False),
             field("is_private", "boolean"),
             field("is_archived", "boolean"),
             field("created_by", "email"),
             field("created_at", "datetime"))
    b.entity("ChatMessage", "chmsg", "A message posted in a channel.",
             field("channel_id", "chat.Channel.id"),
             field("sender_email", "email"),
             field("text"),
             field("posted_at", "datetime"),
             field("thread_parent_id", "chat.ChatMessage.id", required=False),
             field("attachment_path", "file_path", required=False),
             field("pinned", "boolean"))
    b.entity("Membership", "mem", "A person's membership of a channel.",
             field("channel_id", "chat.Channel.id"),
             field("member_email", "email"),
             field("role", enum=["member", "admin"]),
             field("joined_at", "datetime"))
    b.crud("Channel", "CRLSU")
    b.update_as("archive_channel", "Channel", "Archive a channel.", sets={"is_archived": True})
    b.create_as("post_message", "ChatMessage", "Post a message in a channel.", sets={"pinned": False})
    b.crud("ChatMessage", "RLSUD")
    b.update_as("pin_message", "ChatMessage", "Pin a message to its channel.", sets={"pinned": True})
    b.create_as("add_member", "Membership", "Add a person to a channel.")
    b.crud("Membership", "LD")
    b.query("translate_message", "Translate a chat message into another language.",
             [field("chat_message_id", "chat.ChatMessage.id"),
              field("language", description="ISO 639-1 code.")],
             [field("text"), field("language")])
    return b.build()


def services() -> list[ServiceSpec]:
    return [mail(), chat()]
