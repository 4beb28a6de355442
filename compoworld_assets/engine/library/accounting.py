"""Back-office finance: the general ledger and employee expense claims."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "accounting"


def accounting() -> ServiceSpec:
    b = ServiceBuilder("accounting", "Accounting", "accounting",
                       "A general ledger of accounts and journal entries.", MODULE)
    b.entity("LedgerAccount", "gl", "An account of the chart of accounts.",
             field("code"),
             field("name"),
             field("kind", enum=["asset", "liability", "equity", "revenue", "expense"]),
             field("currency", "currency"),
             field("balance", "money"))
    b.entity("JournalEntry", "jrn", "A debit or credit posted to a ledger account.",
             field("account_id", "accounting.LedgerAccount.id"),
             field("entry_date", "date"),
             field("amount", "money"),
             field("currency", "currency"),
             field("direction", enum=["debit", "credit"]),
             field("memo"),
             field("invoice_id", "invoicing.Invoice.id", required=False),
             field("payment_id", "payments.Payment.id", required=False),
             field("posted", "boolean"))
    b.crud("LedgerAccount", "CRLSU")
    b.create_as("record_journal_entry", "JournalEntry", "Record an unposted journal entry.",
                sets={"posted": False})
    b.crud("JournalEntry", "RLSUD")
    b.update_as("post_journal_entry", "JournalEntry", "Post a journal entry to the ledger.",
                sets={"posted": True})
    b.update_as("unpost_journal_entry", "JournalEntry", "Take a posted entry back to draft.",
                sets={"posted": False})
    return b.build()


def expenses() -> ServiceSpec:
    b = ServiceBuilder("expenses", "Expenses", "accounting",
                       "Employee expense reports, approval and reimbursement.", MODULE)
    b.entity("ExpenseReport", "exr", "A claim grouping an employee's expenses.",
             field("title"),
             field("employee_id", "hr.Employee.id"),
             field("submitter_email", "email"),
             field("approver_email", "email", required=False),
             field("trip_id", "travel.Trip.id", required=False),
             field("total", "money"),
             field("currency", "currency"),
             field("status", enum=["draft", "submitted", "approved", "rejected", "reimbursed"]),
             field("submitted_on", "date", required=False))
    b.entity("Expense", "exp", "One receipt of an expense report.",
             field("report_id", "expenses.ExpenseReport.id"),
             field("category", enum=["travel", "lodging", "meals", "supplies", "software", "other"]),
             field("merchant", "company_name"),
             field("amount", "money"),
             field("currency", "currency"),
             field("spent_on", "date"),
             field("receipt_path", "file_path", required=False))
    b.create_as("create_expense_report", "ExpenseReport", "Start an expense report.",
                sets={"status": "draft"})
    b.crud("ExpenseReport", "RLSUD")
    b.update_as("submit_expense_report", "ExpenseReport", "Submit a report for approval.",
                sets={"status": "submitted"}, params=("submitted_on",), required=("submitted_on",))
    b.update_as("approve_expense_report", "ExpenseReport", "Approve a submitted report.",
                sets={"status": "approved"}, params=("approver_email",))
    b.update_as("reject_expense_report", "ExpenseReport", "Reject a submitted report.",
                sets={"status": "rejected"}, params=("approver_email",))
    b.update_as("reimburse_expense_report", "ExpenseReport", "Mark an approved report as reimbursed.",
                sets={"status": "reimbursed"})
    b.create_as("add_expense", "Expense", "Add a receipt to an expense report.")
    b.crud("Expense", "LUD")
    b.query("scan_receipt", "Read merchant, amount, currency and date off a receipt image (OCR).",
             [field("receipt_path", "file_path")],
             [field("merchant", "company_name"), field("amount", "money"), field("currency", "currency"),
              field("spent_on", "date")])
    return b.build()


def services() -> list[ServiceSpec]:
    return [accounting(), expenses()]
