"""The seeded cast of one world: customers, staff, companies and shared files.

Every service of a world draws its people, companies and file paths from the same
population, so a customer's email in the CRM is also an email recipient, an invoice payer
and a ticket's requester.
"""

from __future__ import annotations

import random
from functools import lru_cache

from pydantic import BaseModel, Field

from compoworld_assets.engine.values import CITIES, COMPANIES, FIRST_NAMES, LAST_NAMES, STREETS, WORDS

FILE_EXTENSIONS = ["pdf", "docx", "xlsx", "csv", "png", "txt"]
FILE_AREAS = ["finance", "sales", "legal", "hr", "marketing", "support", "projects", "travel"]


class Company(BaseModel):
    name: str
    domain: str
    website: str
    city: str
    country: str


class Person(BaseModel):
    role: str = Field(default="customer", description="employee, customer, vendor or candidate (library.roles).")
    full_name: str
    email: str
    phone: str
    company: str
    address: str
    city: str
    country: str

    @property
    def first_name(self) -> str:
        return self.full_name.split()[0]

    @property
    def last_name(self) -> str:
        return self.full_name.split()[-1]


class Population(BaseModel):
    """A seeded pool of people and files shared by all services of one world.

    ``customers`` are outside contacts (buyers, payers, recipients); ``staff`` work for
    ``home_company``, the organisation operating the services; ``vendors`` supply it and
    ``candidates`` apply to it. Which pool a field draws from is its role (:mod:`.roles`).
    """

    seed: int
    home_company: Company
    companies: list[Company]
    customers: list[Person] = Field(min_length=1)
    staff: list[Person] = Field(min_length=1)
    vendors: list[Person] = Field(min_length=1)
    candidates: list[Person] = Field(min_length=1)
    files: list[str] = Field(min_length=1)

    @classmethod
    def generate(cls, seed: int, customers: int = 40, staff: int = 24, vendors: int = 12, candidates: int = 12,
                 files: int = 30) -> Population:
        """The population of ``seed`` (made once per argument set; treat it as read-only)."""
        return _generated(seed, customers, staff, vendors, candidates, files)

    @classmethod
    def _make(cls, seed: int, customers: int, staff: int, vendors: int, candidates: int, files: int) -> Population:
        rng = random.Random(f"population:{seed}")
        companies = [_company(name, rng) for name in COMPANIES]
        home, clients = companies[0], companies[1:]
        rng.shuffle(clients)
        names = [f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES]
        chosen = iter(rng.sample(names, customers + staff + vendors + candidates))
        return cls(
            seed=seed,
            home_company=home,
            companies=clients,
            customers=[_person(next(chosen), rng.choice(clients), rng, "customer") for _ in range(customers)],
            staff=[_person(next(chosen), home, rng, "employee") for _ in range(staff)],
            vendors=[_person(next(chosen), rng.choice(clients), rng, "vendor") for _ in range(vendors)],
            candidates=[_person(next(chosen), rng.choice(clients), rng, "candidate") for _ in range(candidates)],
            files=sorted({_file_path(rng) for _ in range(files)}),
        )

    def everyone(self) -> list[Person]:
        return self.customers + self.staff + self.vendors + self.candidates

    def pool(self, role: str) -> list[Person]:
        """The people of one role (``employee`` is the staff)."""
        return {"employee": self.staff, "vendor": self.vendors, "candidate": self.candidates}.get(role,
                                                                                                self.customers)

    def company(self, name: str) -> Company:
        return next(c for c in [self.home_company, *self.companies] if c.name == name)


@lru_cache(maxsize=256)
def _generated(seed: int, customers: int, staff: int, vendors: int, candidates: int, files: int) -> Population:
    return Population._make(seed, customers, staff, vendors, candidates, files)


def _company(name: str, rng: random.Random) -> Company:
    slug = name.lower().split()[0]
    city, country = rng.choice(CITIES)
    return Company(name=name, domain=f"{slug}.example.com", website=f"https://www.{slug}.example.com",
                   city=city, country=country)


def _person(full_name: str, company: Company, rng: random.Random, role: str) -> Person:
    city, country = rng.choice(CITIES)
    return Person(
        role=role,
        full_name=full_name,
        email=f"{full_name.lower().replace(' ', '.')}@{company.domain}",
        phone=f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        company=company.name,
        address=f"{rng.randint(1, 250)} {rng.choice(STREETS)}",
        city=city,
        country=country,
    )


def _file_path(rng: random.Random) -> str:
    stem = "-".join(rng.sample(WORDS, 2))
    return f"/shared/{rng.choice(FILE_AREAS)}/{stem}-{rng.randint(1, 40)}.{rng.choice(FILE_EXTENSIONS)}"
