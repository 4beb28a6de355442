"""Scheduling: a shared calendar with invitations, and meeting-room bookings."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "scheduling"


def calendar() -> ServiceSpec:
    b = ServiceBuilder("calendar", "Calendar", "scheduling", "Events and the people invited to them.", MODULE)
    b.entity("Event", "evt", "A calendar event.",
             field("title"),
             field("description", required=False),
             field("start", "datetime"),
             field("end", "datetime"),
             field("organizer_email", "email"),
             field("location", "address", required=False),
             field("meeting_url", "url", required=False),
             field("status", enum=["confirmed", "tentative", "cancelled"]),
             field("room_id", "rooms.Room.id", required=False))
    b.entity("Attendee", "att", "An invitation of one person to an event.",
             field("event_id", "calendar.Event.id"),
             field("email", "email"),
             field("full_name", "person_name", required=False),
             field("response", enum=["needs_action", "accepted", "declined", "tentative"]),
             field("optional", "boolean"))
    b.crud("Event")
    b.update_as("cancel_event", "Event", "Cancel an event.", sets={"status": "cancelled"})
    b.update_as("reschedule_event", "Event", "Move an event to a new time.", sets={"status": "confirmed"},
                params=("start", "end"), required=("start", "end"))
    b.create_as("invite_attendee", "Attendee", "Invite a person to an event.",
                sets={"response": "needs_action"})
    b.crud("Attendee", "RLD")
    b.update_as("accept_invitation", "Attendee", "Accept an invitation.", sets={"response": "accepted"})
    b.update_as("decline_invitation", "Attendee", "Decline an invitation.", sets={"response": "declined"})
    return b.build()


def rooms() -> ServiceSpec:
    b = ServiceBuilder("rooms", "Meeting Rooms", "scheduling", "Office meeting rooms and their bookings.",
                       MODULE)
    b.entity("Room", "room", "A bookable meeting room.",
             field("name"),
             field("building"),
             field("city", "city"),
             field("capacity", "integer"),
             field("has_video", "boolean"))
    b.entity("RoomBooking", "rbk", "A reservation of a room for a time slot.",
             field("room_id", "rooms.Room.id"),
             field("event_id", "calendar.Event.id", required=False),
             field("booked_by", "email"),
             field("start", "datetime"),
             field("end", "datetime"),
             field("status", enum=["booked", "cancelled"]))
    b.crud("Room", "CRLSU")
    b.create_as("book_room", "RoomBooking", "Book a room for a time slot.", sets={"status": "booked"})
    b.crud("RoomBooking", "RLUD")
    b.update_as("cancel_room_booking", "RoomBooking", "Cancel a room booking.", sets={"status": "cancelled"})
    b.query("find_free_room", "Suggest a free room for a time slot from live occupancy sensors.",
             [field("city", "city"), field("start", "datetime"), field("end", "datetime"),
              field("capacity", "integer")],
             [field("room_id", "rooms.Room.id"), field("name")])
    return b.build()


def services() -> list[ServiceSpec]:
    return [calendar(), rooms()]
