"""Legal: customer and vendor contracts and their signatures."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "legal"


def contracts() -> ServiceSpec:
    b = ServiceBuilder("contracts", "Contracts", "legal",
                       "Contracts with counterparties and their e-signatures.", MODULE)
    b.entity("Contract", "ctr", "An agreement with a counterparty.",
             field("title"),
             field("counterparty", "company_name"),
             field("counterparty_email", "email"),
             field("account_id", "crm.Account.id", required=False),
             field("owner_email", "email"),
             field("value", "money"),
             field("currency", "currency"),
             field("start_date", "date"),
             field("end_date", "date"),
             field("document_path", "file_path"),
             field("status", enum=["draft", "sent", "signed", "active", "expired", "terminated"]))
    b.entity("Signature", "sig", "A party's signature on a contract.",
             field("contract_id", "contracts.Contract.id"),
             field("signer_name", "person_name"),
             field("signer_email", "email"),
             field("signed_at", "datetime"),
             field("method", enum=["electronic", "wet_ink"]))
    b.create_as("draft_contract", "Contract", "Draft a contract.", sets={"status": "draft"})
    b.crud("Contract", "RLSUD")
    b.update_as("send_for_signature", "Contract", "Send a contract to the counterparty.",
                sets={"status": "sent"})
    b.update_as("activate_contract", "Contract", "Mark a signed contract as active.",
                sets={"status": "active"})
    b.update_as("renew_contract", "Contract", "Extend a contract's end date.", sets={"status": "active"},
                params=("end_date",), required=("end_date",))
    b.update_as("terminate_contract", "Contract", "Terminate a contract.", sets={"status": "terminated"})
    b.create_as("record_signature", "Signature", "Record a signature on a contract.")
    b.crud("Signature", "L")
    return b.build()


def services() -> list[ServiceSpec]:
    return [contracts()]
