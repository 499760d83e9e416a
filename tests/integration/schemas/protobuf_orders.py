"""The Protobuf messages the serializer and browse tests share: Order (with a nested Line) importing Money."""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

FIELD = descriptor_pb2.FieldDescriptorProto


def order_classes(
    import_name: str = "acme/common.proto", *, receipt_first: bool = False
) -> tuple[type, type]:
    """Order and Order.Line classes from acme/order.proto, which imports Money from `import_name`.

    `receipt_first` puts a Receipt message before Order, so Order's message index is 1, not 0.
    """
    common = descriptor_pb2.FileDescriptorProto(name=import_name, package="acme.common", syntax="proto3")
    money = common.message_type.add(name="Money")
    money.field.add(name="cents", number=1, type=FIELD.TYPE_INT64, label=FIELD.LABEL_OPTIONAL)
    money.field.add(name="currency", number=2, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL)
    order_file = descriptor_pb2.FileDescriptorProto(
        name="acme/order.proto", package="acme.orders", syntax="proto3", dependency=[import_name]
    )
    if receipt_first:
        order_file.message_type.add(name="Receipt").field.add(
            name="number", number=1, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL
        )
    order = order_file.message_type.add(name="Order")
    line = order.nested_type.add(name="Line")
    line.field.add(name="sku", number=1, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL)
    line.field.add(name="qty", number=2, type=FIELD.TYPE_INT32, label=FIELD.LABEL_OPTIONAL)
    order.field.add(name="id", number=1, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL)
    order.field.add(
        name="total",
        number=2,
        type=FIELD.TYPE_MESSAGE,
        type_name=".acme.common.Money",
        label=FIELD.LABEL_OPTIONAL,
    )
    order.field.add(
        name="lines",
        number=3,
        type=FIELD.TYPE_MESSAGE,
        type_name=".acme.orders.Order.Line",
        label=FIELD.LABEL_REPEATED,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(common)
    pool.Add(order_file)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.orders.Order")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.orders.Order.Line")),
    )
