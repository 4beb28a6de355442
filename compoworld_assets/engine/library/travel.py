"""Business travel: trips with flight and hotel bookings, and car rental."""

from __future__ import annotations

from compoworld_assets.engine.library.builder import ServiceBuilder, field
from compoworld_assets.engine.specs.model import ServiceSpec

MODULE = "travel"
BOOKING_STATUSES = ["reserved", "confirmed", "cancelled"]


def travel() -> ServiceSpec:
    b = ServiceBuilder("travel", "Travel", "travel", "Business trips with their flight and hotel bookings.",
                       MODULE)
    b.entity("Trip", "trip", "A business trip.",
             field("traveller_email", "email"),
             field("traveller_name", "person_name"),
             field("employee_id", "hr.Employee.id", required=False),
             field("purpose"),
             field("origin", "city"),
             field("destination", "city"),
             field("start_date", "date"),
             field("end_date", "date"),
             field("budget", "money"),
             field("currency", "currency"),
             field("status", enum=["planned", "booked", "completed", "cancelled"]))
    b.entity("FlightBooking", "flt", "A flight reserved for a trip.",
             field("trip_id", "travel.Trip.id"),
             field("traveller_email", "email"),
             field("airline", "company_name"),
             field("flight_number"),
             field("origin", "city"),
             field("destination", "city"),
             field("departure_at", "datetime"),
             field("arrival_at", "datetime"),
             field("price", "money"),
             field("currency", "currency"),
             field("seat", required=False),
             field("status", enum=BOOKING_STATUSES))
    b.entity("HotelBooking", "htl", "A hotel stay reserved for a trip.",
             field("trip_id", "travel.Trip.id"),
             field("traveller_email", "email"),
             field("hotel_name"),
             field("address", "address"),
             field("city", "city"),
             field("check_in", "date"),
             field("check_out", "date"),
             field("nightly_rate", "money"),
             field("currency", "currency"),
             field("status", enum=BOOKING_STATUSES))
    b.create_as("plan_trip", "Trip", "Plan a new trip.", sets={"status": "planned"})
    b.crud("Trip", "RLU")
    b.update_as("cancel_trip", "Trip", "Cancel a trip.", sets={"status": "cancelled"})
    b.create_as("book_flight", "FlightBooking", "Reserve a flight for a trip.", sets={"status": "reserved"})
    b.crud("FlightBooking", "RL")
    b.update_as("cancel_flight", "FlightBooking", "Cancel a flight booking.", sets={"status": "cancelled"})
    b.create_as("book_hotel", "HotelBooking", "Reserve a hotel for a trip.", sets={"status": "reserved"})
    b.crud("HotelBooking", "RL")
    b.update_as("cancel_hotel", "HotelBooking", "Cancel a hotel booking.", sets={"status": "cancelled"})
    b.query("search_flights", "Search live airline availability and fares.",
             [field("origin", "city"), field("destination", "city"), field("date", "date")],
             [field("airline", "company_name"), field("flight_number"), field("departure_at", "datetime"),
              field("price", "money"), field("currency", "currency")])
    return b.build()


def car_rental() -> ServiceSpec:
    b = ServiceBuilder("car_rental", "Car Rental", "travel", "Rental vehicles and reservations.", MODULE)
    b.entity("Vehicle", "veh", "A car available for rent.",
             field("make"),
             field("model"),
             field("category", enum=["economy", "compact", "suv", "van", "luxury"]),
             field("city", "city"),
             field("daily_rate", "money"),
             field("currency", "currency"),
             field("available", "boolean"))
    b.entity("Rental", "rnt", "A reservation of a vehicle.",
             field("vehicle_id", "car_rental.Vehicle.id"),
             field("renter_email", "email"),
             field("renter_name", "person_name"),
             field("trip_id", "travel.Trip.id", required=False),
             field("pickup_at", "datetime"),
             field("return_at", "datetime"),
             field("total", "money"),
             field("currency", "currency"),
             field("status", enum=["reserved", "active", "returned", "cancelled"]))
    b.crud("Vehicle", "CRLSU")
    b.create_as("reserve_vehicle", "Rental", "Reserve a vehicle.", sets={"status": "reserved"})
    b.crud("Rental", "RLU")
    b.update_as("start_rental", "Rental", "Hand over the vehicle.", sets={"status": "active"})
    b.update_as("return_vehicle", "Rental", "Record the vehicle's return.", sets={"status": "returned"})
    b.update_as("cancel_rental", "Rental", "Cancel a reservation.", sets={"status": "cancelled"})
    return b.build()


def services() -> list[ServiceSpec]:
    return [travel(), car_rental()]
