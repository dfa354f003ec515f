"""Tables of the embedded Placement (``berth.placement.embedded``): providers, their
inventory, traits and aggregates, and the allocations of containers on them.

Resource classes and traits are stored by name (no lookup tables): berth uses a
handful of standard classes and no class is ever renamed. ``berth.db.models``
imports this module, so ``Base.metadata`` always holds these tables too; both build on
``berth.db.base``.
"""

from __future__ import annotations

from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from berth.db.base import Base, TimestampMixin


class ResourceProvider(TimestampMixin, Base):
    __tablename__ = "resource_provider"
    __table_args__ = (
        UniqueConstraint("uuid", name="uniq_resource_provider0uuid"),
        UniqueConstraint("name", name="uniq_resource_provider0name"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    #: Bumped by every change to the provider or to an allocation on it.
    generation: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class ProviderInventory(TimestampMixin, Base):
    __tablename__ = "inventory"
    __table_args__ = (
        UniqueConstraint("resource_provider_id", "resource_class",
                         name="uniq_inventory0provider0class"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("resource_provider.id", ondelete="CASCADE"), nullable=False)
    resource_class: Mapped[str] = mapped_column(String(255), nullable=False)
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    reserved: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    min_unit: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    max_unit: Mapped[int] = mapped_column(Integer, nullable=False)
    step_size: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    allocation_ratio: Mapped[float] = mapped_column(Float, nullable=False, default=1.0)


class ProviderAllocation(TimestampMixin, Base):
    """One resource class held by one consumer (container) on one provider."""

    __tablename__ = "allocation"
    __table_args__ = (
        UniqueConstraint("consumer_id", "resource_provider_id", "resource_class",
                         name="uniq_allocation0consumer0provider0class"),
        Index("allocation_consumer_idx", "consumer_id"),
        Index("allocation_provider_class_idx", "resource_provider_id", "resource_class"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("resource_provider.id", ondelete="CASCADE"), nullable=False)
    consumer_id: Mapped[str] = mapped_column(String(36), nullable=False)
    resource_class: Mapped[str] = mapped_column(String(255), nullable=False)
    used: Mapped[int] = mapped_column(Integer, nullable=False)
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))


class ProviderTrait(Base):
    __tablename__ = "resource_provider_trait"

    resource_provider_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("resource_provider.id", ondelete="CASCADE"), primary_key=True)
    trait: Mapped[str] = mapped_column(String(255), primary_key=True)


class ProviderAggregate(Base):
    __tablename__ = "resource_provider_aggregate"

    resource_provider_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("resource_provider.id", ondelete="CASCADE"), primary_key=True)
    aggregate_uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
