"""Project management: projects, tasks and milestones, and time tracking."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "projects"


def projects() -> ServiceSpec:
    b = ServiceBuilder("projects", "Projects", "project_management", "Projects, their tasks and milestones.",
                       MODULE)
    b.entity("Project", "prj", "A piece of work with an owner and a deadline.",
             field("name"),
             field("description", required=False),
             field("owner_email", "email"),
             field("client_account_id", "crm.Account.id", required=False),
             field("status", enum=["planned", "active", "on_hold", "done"]),
             field("start_date", "date"),
             field("due_date", "date"),
             field("budget", "money"),
             field("currency", "currency"))
    b.entity("Task", "task", "A unit of work in a project.",
             field("project_id", "projects.Project.id"),
             field("title"),
             field("description", required=False),
             field("assignee_email", "email"),
             field("status", enum=["todo", "in_progress", "blocked", "done"]),
             field("priority", enum=["low", "medium", "high"]),
             field("due_date", "date"),
             field("ticket_id", "helpdesk.Ticket.id", required=False))
    b.entity("Milestone", "mst", "A dated checkpoint of a project.",
             field("project_id", "projects.Project.id"),
             field("name"),
             field("due_date", "date"),
             field("reached", "boolean"))
    b.crud("Project", "CRLSU")
    b.update_as("complete_project", "Project", "Mark a project as done.", sets={"status": "done"})
    b.crud("Task")
    b.update_as("start_task", "Task", "Start work on a task.", sets={"status": "in_progress"})
    b.update_as("block_task", "Task", "Flag a task as blocked.", sets={"status": "blocked"})
    b.update_as("complete_task", "Task", "Mark a task as done.", sets={"status": "done"})
    b.create_as("add_milestone", "Milestone", "Add a milestone to a project.", sets={"reached": False})
    b.crud("Milestone", "L")
    b.update_as("reach_milestone", "Milestone", "Mark a milestone as reached.", sets={"reached": True})
    return b.build()


def timesheets() -> ServiceSpec:
    b = ServiceBuilder("timesheets", "Timesheets", "project_management", "Hours logged against projects.",
                       MODULE)
    b.entity("TimeEntry", "time", "Hours one person worked on a project on one day.",
             field("employee_email", "email"),
             field("project_id", "projects.Project.id"),
             field("task_id", "projects.Task.id", required=False),
             field("work_date", "date"),
             field("hours", "number"),
             field("billable", "boolean"),
             field("description"),
             field("status", enum=["draft", "submitted", "approved"]))
    b.entity("BillingRate", "rate", "The hourly rate billed for a person on a project.",
             field("project_id", "projects.Project.id"),
             field("employee_email", "email"),
             field("hourly_rate", "money"),
             field("currency", "currency"))
    b.create_as("log_time", "TimeEntry", "Log hours worked.", sets={"status": "draft"})
    b.crud("TimeEntry", "RLUD")
    b.update_as("submit_time_entry", "TimeEntry", "Submit hours for approval.", sets={"status": "submitted"})
    b.update_as("approve_time_entry", "TimeEntry", "Approve submitted hours.", sets={"status": "approved"})
    b.crud("BillingRate", "CLU")
    return b.build()


def services() -> list[ServiceSpec]:
    return [projects(), timesheets()]
