"""Marketing: campaigns and mailing lists, social media posts, and customer surveys."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "marketing"
PLATFORMS = ["linkedin", "x", "instagram", "facebook"]


def marketing() -> ServiceSpec:
    b = ServiceBuilder("marketing", "Marketing", "marketing",
                       "Campaigns, mailing lists and their subscribers.", MODULE)
    b.entity("Campaign", "cmp", "A marketing campaign.",
             field("name"),
             field("channel", enum=["email", "social", "search", "display"]),
             field("status", enum=["draft", "scheduled", "running", "paused", "completed"]),
             field("owner_email", "email"),
             field("budget", "money"),
             field("currency", "currency"),
             field("start_date", "date"),
             field("end_date", "date"),
             field("landing_url", "url"))
    b.entity("MailingList", "mlst", "A list of newsletter subscribers.",
             field("name"),
             field("description", required=False),
             field("owner_email", "email"))
    b.entity("Subscriber", "sub", "A person subscribed to a mailing list.",
             field("list_id", "marketing.MailingList.id"),
             field("email", "email"),
             field("full_name", "person_name"),
             field("contact_id", "crm.Contact.id", required=False),
             field("country", "country", required=False),
             field("status", enum=["subscribed", "unsubscribed", "bounced"]),
             field("subscribed_at", "datetime"))
    b.crud("Campaign")
    b.update_as("launch_campaign", "Campaign", "Start running a campaign.", sets={"status": "running"})
    b.update_as("pause_campaign", "Campaign", "Pause a running campaign.", sets={"status": "paused"})
    b.update_as("complete_campaign", "Campaign", "Finish a campaign.", sets={"status": "completed"})
    b.crud("MailingList", "CL")
    b.create_as("subscribe", "Subscriber", "Subscribe a person to a list.", sets={"status": "subscribed"})
    b.crud("Subscriber", "RLS")
    b.update_as("unsubscribe", "Subscriber", "Unsubscribe a person.", sets={"status": "unsubscribed"})
    return b.build()


def social() -> ServiceSpec:
    b = ServiceBuilder("social", "Social Media", "marketing", "Company social accounts and scheduled posts.",
                       MODULE)
    b.entity("SocialAccount", "sacc", "A company account on a social platform.",
             field("handle"),
             field("platform", enum=PLATFORMS),
             field("owner_email", "email"),
             field("profile_url", "url"))
    b.entity("Post", "post", "A social media post.",
             field("account_id", "social.SocialAccount.id"),
             field("text"),
             field("link", "url", required=False),
             field("media_path", "file_path", required=False),
             field("campaign_id", "marketing.Campaign.id", required=False),
             field("author_email", "email"),
             field("status", enum=["draft", "scheduled", "published", "withdrawn"]),
             field("scheduled_at", "datetime", required=False))
    b.crud("SocialAccount", "CRL")
    b.create_as("draft_post", "Post", "Draft a post.", sets={"status": "draft"})
    b.crud("Post", "RLSUD")
    b.update_as("schedule_post", "Post", "Schedule a post for publication.", sets={"status": "scheduled"},
                params=("scheduled_at",), required=("scheduled_at",))
    b.update_as("publish_post", "Post", "Publish a post now.", sets={"status": "published"})
    b.update_as("withdraw_post", "Post", "Take a published post down.", sets={"status": "withdrawn"})
    b.query("get_post_engagement", "Fetch a post's live likes, shares and comments from the platform.",
             [field("post_id", "social.Post.id")],
             [field("likes", "integer"), field("shares", "integer"), field("comments", "integer")])
    return b.build()


def surveys() -> ServiceSpec:
    b = ServiceBuilder("surveys", "Surveys", "marketing", "Customer surveys, their questions and responses.",
                       MODULE)
    b.entity("Survey", "srv", "A questionnaire sent to customers.",
             field("title"),
             field("description", required=False),
             field("owner_email", "email"),
             field("status", enum=["draft", "open", "closed"]),
             field("closes_on", "date"))
    b.entity("Question", "qst", "One question of a survey.",
             field("survey_id", "surveys.Survey.id"),
             field("text"),
             field("kind", enum=["rating", "text", "choice"]),
             field("required", "boolean"))
    b.entity("SurveyResponse", "resp", "One person's answers to a survey.",
             field("survey_id", "surveys.Survey.id"),
             field("respondent_email", "email"),
             field("ticket_id", "helpdesk.Ticket.id", required=False,
                   description="The support case surveyed."),
             field("score", "integer"),
             field("comment", required=False),
             field("submitted_at", "datetime"))
    b.create_as("create_survey", "Survey", "Draft a survey.", sets={"status": "draft"})
    b.crud("Survey", "RLU")
    b.update_as("open_survey", "Survey", "Open a survey for responses.", sets={"status": "open"})
    b.update_as("close_survey", "Survey", "Close a survey.", sets={"status": "closed"})
    b.crud("Question", "CLD")
    b.create_as("submit_response", "SurveyResponse", "Record a person's answers.")
    b.crud("SurveyResponse", "L")
    return b.build()


def services() -> list[ServiceSpec]:
    return [marketing(), social(), surveys()]
