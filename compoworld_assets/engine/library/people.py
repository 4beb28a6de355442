"""Human resources: employees and leave, payroll, and recruiting."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "people"


def hr() -> ServiceSpec:
    b = ServiceBuilder("hr", "HR", "hr", "Employees, departments and leave requests.", MODULE)
    b.entity("Department", "dept", "An organisational unit.",
             field("name"),
             field("cost_center"),
             field("head_email", "email", required=False))
    b.entity("Employee", "emp", "A person employed by the company.",
             field("full_name", "person_name"),
             field("email", "email"),
             field("phone", "phone", required=False),
             field("job_title"),
             field("department_id", "hr.Department.id"),
             field("manager_id", "hr.Employee.id", required=False),
             field("hire_date", "date"),
             field("city", "city"),
             field("country", "country"),
             field("status", enum=["active", "on_leave", "terminated"]))
    b.entity("LeaveRequest", "lvr", "A request for time off.",
             field("employee_id", "hr.Employee.id"),
             field("kind", enum=["vacation", "sick", "parental", "unpaid"]),
             field("start_date", "date"),
             field("end_date", "date"),
             field("reason", required=False),
             field("status", enum=["pending", "approved", "rejected", "cancelled"]))
    b.crud("Employee")
    b.update_as("terminate_employee", "Employee", "Record that an employee left.",
                sets={"status": "terminated"})
    b.crud("Department", "CRL")
    b.create_as("request_leave", "LeaveRequest", "Request time off.", sets={"status": "pending"})
    b.crud("LeaveRequest", "RL")
    b.update_as("approve_leave", "LeaveRequest", "Approve a leave request.", sets={"status": "approved"})
    b.update_as("reject_leave", "LeaveRequest", "Reject a leave request.", sets={"status": "rejected"})
    b.update_as("cancel_leave", "LeaveRequest", "Withdraw a leave request.", sets={"status": "cancelled"})
    return b.build()


def payroll() -> ServiceSpec:
    b = ServiceBuilder("payroll", "Payroll", "hr", "Salaries, payslips and bonuses.", MODULE)
    b.entity("Salary", "sal", "An employee's contracted annual salary.",
             field("employee_id", "hr.Employee.id"),
             field("annual_salary", "money"),
             field("currency", "currency"),
             field("effective_date", "date"))
    b.entity("Payslip", "psl", "One pay period's pay for an employee.",
             field("employee_id", "hr.Employee.id"),
             field("employee_email", "email"),
             field("period_start", "date"),
             field("period_end", "date"),
             field("gross", "money"),
             field("tax", "money"),
             field("net", "money"),
             field("currency", "currency"),
             field("status", enum=["draft", "approved", "paid"]),
             field("pdf_path", "file_path", required=False))
    b.entity("Bonus", "bon", "A one-off bonus award.",
             field("employee_id", "hr.Employee.id"),
             field("amount", "money"),
             field("currency", "currency"),
             field("reason"),
             field("awarded_on", "date"))
    b.crud("Salary", "CRLU")
    b.create_as("create_payslip", "Payslip", "Draft a payslip.", sets={"status": "draft"})
    b.crud("Payslip", "RLSU")
    b.update_as("approve_payslip", "Payslip", "Approve a payslip for payment.", sets={"status": "approved"})
    b.update_as("mark_payslip_paid", "Payslip", "Record that a payslip was paid.", sets={"status": "paid"})
    b.crud("Bonus", "CLD")
    return b.build()


def recruiting() -> ServiceSpec:
    b = ServiceBuilder("recruiting", "Recruiting", "hr", "Job openings, candidates and interviews.", MODULE)
    b.entity("JobOpening", "job", "An open position.",
             field("title"),
             field("department_id", "hr.Department.id"),
             field("city", "city"),
             field("hiring_manager_email", "email"),
             field("salary_budget", "money"),
             field("currency", "currency"),
             field("status", enum=["open", "on_hold", "closed"]),
             field("posted_on", "date"))
    b.entity("Candidate", "cand", "An applicant for a job.",
             field("full_name", "person_name"),
             field("email", "email"),
             field("phone", "phone", required=False),
             field("job_id", "recruiting.JobOpening.id"),
             field("stage", enum=["applied", "screening", "interview", "offer", "hired", "rejected"]),
             field("resume_path", "file_path"),
             field("applied_on", "date"))
    b.entity("Interview", "intv", "An interview of a candidate.",
             field("candidate_id", "recruiting.Candidate.id"),
             field("interviewer_email", "email"),
             field("scheduled_at", "datetime"),
             field("event_id", "calendar.Event.id", required=False),
             field("outcome", enum=["pending", "pass", "fail"]))
    b.create_as("post_job", "JobOpening", "Post a new job opening.", sets={"status": "open"})
    b.crud("JobOpening", "RLU")
    b.update_as("close_job", "JobOpening", "Close a job opening.", sets={"status": "closed"})
    b.create_as("add_candidate", "Candidate", "Register an applicant.", sets={"stage": "applied"})
    b.crud("Candidate", "RLSU")
    b.update_as("advance_candidate", "Candidate", "Move a candidate to another stage.", params=("stage",),
                required=("stage",))
    b.update_as("reject_candidate", "Candidate", "Reject a candidate.", sets={"stage": "rejected"})
    b.update_as("hire_candidate", "Candidate", "Hire a candidate.", sets={"stage": "hired"})
    b.create_as("schedule_interview", "Interview", "Schedule an interview.", sets={"outcome": "pending"})
    b.crud("Interview", "LU")
    return b.build()


def services() -> list[ServiceSpec]:
    return [hr(), payroll(), recruiting()]
