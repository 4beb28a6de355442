"""IT: hardware assets and software licences, and the user directory."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "it"


def it_assets() -> ServiceSpec:
    b = ServiceBuilder("it_assets", "IT Assets", "it", "Company devices and software licences.", MODULE)
    b.entity("Device", "dev", "A piece of company hardware.",
             field("serial_number"),
             field("model"),
             field("kind", enum=["laptop", "phone", "monitor", "tablet"]),
             field("status", enum=["in_stock", "assigned", "repair", "retired"]),
             field("assigned_to", "email", required=False),
             field("employee_id", "hr.Employee.id", required=False),
             field("purchased_on", "date"),
             field("cost", "money"),
             field("currency", "currency"))
    b.entity("License", "lic", "A software licence with a number of seats.",
             field("product"),
             field("vendor", "company_name"),
             field("seats", "integer"),
             field("expires_on", "date"),
             field("cost", "money"),
             field("currency", "currency"))
    b.crud("Device")
    b.update_as("assign_device", "Device", "Hand a device to an employee.", sets={"status": "assigned"},
                params=("assigned_to", "employee_id"), required=("assigned_to",))
    b.update_as("return_device", "Device", "Take a device back into stock.", sets={"status": "in_stock"})
    b.update_as("retire_device", "Device", "Retire a device.", sets={"status": "retired"})
    b.crud("License", "CRLU")
    return b.build()


def directory() -> ServiceSpec:
    b = ServiceBuilder("directory", "Directory", "it", "User accounts and groups for single sign-on.", MODULE)
    b.entity("UserAccount", "usr", "A login account.",
             field("username"),
             field("email", "email"),
             field("full_name", "person_name"),
             field("employee_id", "hr.Employee.id", required=False),
             field("role", enum=["user", "admin", "guest"]),
             field("status", enum=["active", "suspended", "deactivated"]),
             field("last_login_at", "datetime", required=False))
    b.entity("Group", "grp", "A group of accounts sharing permissions.",
             field("name"),
             field("description", required=False))
    b.entity("GroupMember", "gmem", "An account's membership of a group.",
             field("group_id", "directory.Group.id"),
             field("user_id", "directory.UserAccount.id"))
    b.create_as("create_user_account", "UserAccount", "Provision an account.", sets={"status": "active"})
    b.crud("UserAccount", "RLSU")
    b.update_as("suspend_user", "UserAccount", "Suspend an account.", sets={"status": "suspended"})
    b.update_as("reactivate_user", "UserAccount", "Reactivate an account.", sets={"status": "active"})
    b.update_as("deactivate_user", "UserAccount", "Deactivate an account for good.",
                sets={"status": "deactivated"})
    b.crud("Group", "CL")
    b.create_as("add_to_group", "GroupMember", "Add an account to a group.")
    b.crud("GroupMember", "LD")
    return b.build()


def services() -> list[ServiceSpec]:
    return [it_assets(), directory()]
