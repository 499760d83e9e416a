"""`.proto` text ⇄ FileDescriptorProto, written for the registry (no protoc at run time).

`parse_proto` reads proto2/proto3 files: package, imports, options, messages (nested, maps, oneofs, proto3
`optional`, reserved ranges, extension ranges), enums and services, and resolves type names against the
file and the descriptors of its imports like protoc does (innermost scope first). `print_proto` writes one
fixed layout, so that a schema sent as text and the same schema sent as a serialized descriptor are stored
identically. Custom options (`(my.option) = …`) are accepted and not kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf import descriptor_pb2
from google.protobuf.message import Message

FDP = descriptor_pb2.FileDescriptorProto
FIELD = descriptor_pb2.FieldDescriptorProto

SCALARS: dict[str, int] = {
    "double": FIELD.TYPE_DOUBLE,
    "float": FIELD.TYPE_FLOAT,
    "int64": FIELD.TYPE_INT64,
    "uint64": FIELD.TYPE_UINT64,
    "int32": FIELD.TYPE_INT32,
    "fixed64": FIELD.TYPE_FIXED64,
    "fixed32": FIELD.TYPE_FIXED32,
    "bool": FIELD.TYPE_BOOL,
    "string": FIELD.TYPE_STRING,
    "bytes": FIELD.TYPE_BYTES,
    "uint32": FIELD.TYPE_UINT32,
    "sfixed32": FIELD.TYPE_SFIXED32,
    "sfixed64": FIELD.TYPE_SFIXED64,
    "sint32": FIELD.TYPE_SINT32,
    "sint64": FIELD.TYPE_SINT64,
}
SCALAR_NAMES = {number: name for name, number in SCALARS.items()}
MAX_FIELD_NUMBER = 536870911
_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
    |(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<number>-?(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan)(?![\w.]))
    |(?P<ident>\.?[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)
    |(?P<symbol>[{}\[\]()<>;=,:.\-+])
    """,
    re.VERBOSE | re.DOTALL,
)


class ProtoSyntaxError(ValueError):
    pass


@dataclass
class Token:
    kind: str
    text: str
    line: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    position, line = 0, 1
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ProtoSyntaxError(f"line {line}: unexpected character {text[position]!r}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), line))
        line += match.group().count("\n")
        position = match.end()
    return tokens


def _integer_literal(text: str) -> int:
    """Decimal, hexadecimal (0x…) or octal (0…) like protoc."""
    negative = text.startswith("-")
    digits = text.lstrip("-")
    if digits[:2].lower() == "0x":
        value = int(digits, 16)
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    return -value if negative else value


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in body else body


def _camel(name: str, upper_first: bool) -> str:
    parts = name.split("_")
    text = "".join(part[:1].upper() + part[1:] for part in parts)
    return text if upper_first else text[:1].lower() + text[1:]


def default_json_name(field_name: str) -> str:
    out, upper = [], False
    for char in field_name:
        if char == "_":
            upper = True
        elif upper:
            out.append(char.upper())
            upper = False
        else:
            out.append(char)
    return "".join(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.index = 0
        self.file = FDP()
        # Fields whose type names wait for resolution: (scope, field).
        self.unresolved: list[tuple[str, descriptor_pb2.FieldDescriptorProto]] = []

    # -- token helpers
    def peek(self, offset: int = 0) -> Token | None:
        index = self.index + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise ProtoSyntaxError("unexpected end of file")
        self.index += 1
        return token

    def error(self, message: str) -> ProtoSyntaxError:
        token = self.peek()
        where = f"line {token.line}" if token else "end of file"
        return ProtoSyntaxError(f"{where}: {message}")

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token is not None and token.text == text and token.kind in ("symbol", "ident"):
            self.index += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            found = self.peek()
            raise self.error(f"expected {text!r}, found {found.text if found else 'end of file'!r}")

    def identifier(self) -> str:
        token = self.next()
        if token.kind != "ident":
            self.index -= 1
            raise self.error(f"expected a name, found {token.text!r}")
        return token.text

    def integer(self) -> int:
        token = self.next()
        sign = 1
        if token.text in ("-", "+"):
            sign = -1 if token.text == "-" else 1
            token = self.next()
        if token.kind != "number":
            self.index -= 1
            raise self.error(f"expected an integer, found {token.text!r}")
        try:
            return sign * _integer_literal(token.text)
        except ValueError as error:
            raise self.error(f"{token.text!r} is not an integer") from error

    def constant(self) -> str | int | float | bool:
        token = self.next()
        if token.kind == "string":
            text = _unquote(token.text)
            while self.peek() is not None and self.peek().kind == "string":  # adjacent literals concatenate
                text += _unquote(self.next().text)
            return text
        if token.text in ("-", "+"):
            inner = self.constant()
            if not isinstance(inner, int | float) or isinstance(inner, bool):
                raise self.error("a sign needs a number")
            return -inner if token.text == "-" else inner
        if token.kind == "number":
            text = token.text
            if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", text):
                return _integer_literal(text)
            return float(text)
        if token.text == "true":
            return True
        if token.text == "false":
            return False
        if token.kind == "ident":
            return token.text
        if token.text == "{":  # aggregate option values: skip the text-format block
            depth = 1
            while depth:
                inner = self.next()
                depth += {"{": 1, "}": -1}.get(inner.text, 0)
            return ""
        self.index -= 1
        raise self.error(f"expected a constant, found {token.text!r}")

    def option_name(self) -> tuple[str, bool]:
        """The option's name, and whether it is a custom (parenthesized) option."""
        custom = False
        parts = []
        while True:
            if self.accept("("):
                parts.append(self.identifier())
                self.expect(")")
                custom = True
            else:
                parts.append(self.identifier())
            if not self.accept("."):
                token = self.peek()
                if token is not None and token.kind == "ident" and token.text.startswith("."):
                    parts.append(self.identifier()[1:])
                    continue
                break
        return ".".join(parts), custom

    # -- grammar
    def parse(self) -> FDP:
        if self.accept("syntax"):
            self.expect("=")
            syntax = self.constant()
            if syntax not in ("proto2", "proto3"):
                raise self.error(f"unknown syntax {syntax!r}")
            self.expect(";")
            if syntax == "proto3":
                self.file.syntax = "proto3"
        elif self.accept("edition"):
            raise self.error("editions are not supported")
        while self.peek() is not None:
            self.top_level()
        return self.file

    def top_level(self) -> None:
        if self.accept(";"):
            return
        if self.accept("package"):
            self.file.package = self.identifier()
            self.expect(";")
        elif self.accept("import"):
            kind = "weak" if self.accept("weak") else "public" if self.accept("public") else ""
            path = self.constant()
            if not isinstance(path, str):
                raise self.error("an import needs a file name")
            self.expect(";")
            if kind == "public":
                self.file.public_dependency.append(len(self.file.dependency))
            elif kind == "weak":
                self.file.weak_dependency.append(len(self.file.dependency))
            self.file.dependency.append(path)
        elif self.accept("option"):
            self.option_statement(self.file.options)
        elif self.accept("message"):
            self.message(self.file.message_type.add(), self.scope_prefix())
        elif self.accept("enum"):
            self.enum(self.file.enum_type.add())
        elif self.accept("service"):
            self.service(self.file.service.add())
        elif self.accept("extend"):
            self.extend(self.file.extension, self.scope_prefix())
        else:
            token = self.peek()
            raise self.error(f"unexpected {token.text if token else 'end of file'!r}")

    def scope_prefix(self) -> str:
        return f".{self.file.package}" if self.file.package else ""

    def option_statement(self, options: Message) -> None:
        name, custom = self.option_name()
        self.expect("=")
        value = self.constant()
        self.expect(";")
        if not custom:
            set_option(options, name, value)

    def field_options(self, field: descriptor_pb2.FieldDescriptorProto) -> None:
        if not self.accept("["):
            return
        while True:
            name, custom = self.option_name()
            self.expect("=")
            value = self.constant()
            if custom:
                pass
            elif name == "default":
                field.default_value = _default_text(value)
            elif name == "json_name":
                field.json_name = str(value)
            else:
                set_option(field.options, name, value)
            if not self.accept(","):
                break
        self.expect("]")

    def message(self, message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        message.name = self.identifier()
        self.message_body(message, f"{scope}.{message.name}")

    def message_body(self, message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            if self.accept("message"):
                self.message(message.nested_type.add(), scope)
            elif self.accept("enum"):
                self.enum(message.enum_type.add())
            elif self.accept("option"):
                self.option_statement(message.options)
            elif self.accept("oneof"):
                self.oneof(message, scope)
            elif self.accept("reserved"):
                self.reserved(message.reserved_range, message.reserved_name, exclusive_end=True)
            elif self.accept("extensions"):
                self.extension_ranges(message)
            elif self.accept("extend"):
                self.extend(message.extension, scope)
            elif self.peek() is not None and self.peek().text == "map" and self.peek(1).text == "<":
                self.next()
                self.next()
                self.map_field(message, scope)
            else:
                self.field(message, message.field, scope)
        for field in message.field:
            if field.proto3_optional and not field.HasField("oneof_index"):
                field.oneof_index = len(message.oneof_decl)
                message.oneof_decl.add().name = f"_{field.name}"

    def field(
        self,
        message: descriptor_pb2.DescriptorProto | None,
        fields: Iterable,
        scope: str,
        oneof_index: int | None = None,
    ) -> descriptor_pb2.FieldDescriptorProto:
        field = fields.add()  # type: ignore[attr-defined]
        label = None
        if (
            oneof_index is None
            and self.peek() is not None
            and self.peek().text in ("optional", "required", "repeated")
        ):
            following = self.peek(1)
            if following is not None and following.text != "=":
                label = self.next().text
        type_name = self.identifier()
        if type_name == "group":
            raise self.error("groups are not supported")
        field.name = self.identifier()
        self.expect("=")
        field.number = self.integer()
        if not 1 <= field.number <= MAX_FIELD_NUMBER:
            raise self.error(f"field number {field.number} of {field.name!r} is out of range")
        self.field_options(field)
        self.expect(";")
        proto3 = self.file.syntax == "proto3"
        if label == "repeated":
            field.label = FIELD.LABEL_REPEATED
        elif label == "required":
            if proto3:
                raise self.error(f"required fields are not allowed in proto3 ({field.name!r})")
            field.label = FIELD.LABEL_REQUIRED
        else:
            field.label = FIELD.LABEL_OPTIONAL
            if label is None and not proto3 and oneof_index is None and message is not None:
                raise self.error(f"field {field.name!r} needs a label in proto2")
        if oneof_index is not None:
            field.oneof_index = oneof_index
        elif label == "optional" and proto3 and message is not None:
            field.proto3_optional = True  # its synthetic oneof is added after the real ones
        if type_name in SCALARS:
            field.type = SCALARS[type_name]  # type: ignore[assignment]
        else:
            field.type_name = type_name
            self.unresolved.append((scope, field))
        return field

    def map_field(self, message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        key_type = self.identifier()
        self.expect(",")
        value_type = self.identifier()
        self.expect(">")
        field = message.field.add()
        field.name = self.identifier()
        self.expect("=")
        field.number = self.integer()
        self.field_options(field)
        self.expect(";")
        if key_type not in SCALARS or key_type in ("double", "float", "bytes"):
            raise self.error(f"{key_type!r} cannot be a map key")
        entry = message.nested_type.add()
        entry.name = _camel(field.name, upper_first=True) + "Entry"
        entry.options.map_entry = True
        for number, (name, type_name) in enumerate((("key", key_type), ("value", value_type)), start=1):
            part = entry.field.add()
            part.name, part.number, part.label = name, number, FIELD.LABEL_OPTIONAL
            if type_name in SCALARS:
                part.type = SCALARS[type_name]  # type: ignore[assignment]
            else:
                part.type_name = type_name
                self.unresolved.append((f"{scope}.{entry.name}", part))
        field.label = FIELD.LABEL_REPEATED
        field.type = FIELD.TYPE_MESSAGE
        field.type_name = f"{scope}.{entry.name}"

    def oneof(self, message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        declaration = message.oneof_decl.add()
        declaration.name = self.identifier()
        index = len(message.oneof_decl) - 1
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(declaration.options)
            else:
                self.field(message, message.field, scope, oneof_index=index)

    def reserved(self, ranges: Iterable, names: Iterable, *, exclusive_end: bool) -> None:
        while True:
            token = self.peek()
            if token is not None and token.kind == "string":
                names.append(_unquote(self.next().text))  # type: ignore[attr-defined]
            elif token is not None and token.kind == "ident" and not token.text.startswith("."):
                names.append(self.next().text)  # type: ignore[attr-defined]  # editions-style names
            else:
                start = self.integer()
                end = start
                if self.accept("to"):
                    end = MAX_FIELD_NUMBER if self.accept("max") else self.integer()
                entry = ranges.add()  # type: ignore[attr-defined]
                entry.start, entry.end = start, end + 1 if exclusive_end else end
            if not self.accept(","):
                break
        self.expect(";")

    def extension_ranges(self, message: descriptor_pb2.DescriptorProto) -> None:
        while True:
            start = self.integer()
            end = start
            if self.accept("to"):
                end = MAX_FIELD_NUMBER if self.accept("max") else self.integer()
            entry = message.extension_range.add()
            entry.start, entry.end = start, end + 1
            if not self.accept(","):
                break
        if self.accept("["):  # extension range options: skip them
            while not self.accept("]"):
                self.next()
        self.expect(";")

    def extend(self, extensions: Iterable, scope: str) -> None:
        extendee = self.identifier()
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            field = self.field(None, extensions, scope)
            field.extendee = extendee
            self.unresolved.append((scope, field))

    def enum(self, enum: descriptor_pb2.EnumDescriptorProto) -> None:
        enum.name = self.identifier()
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(enum.options)
            elif self.accept("reserved"):
                self.reserved(enum.reserved_range, enum.reserved_name, exclusive_end=False)
            else:
                value = enum.value.add()
                value.name = self.identifier()
                self.expect("=")
                value.number = self.integer()
                if self.accept("["):
                    while True:
                        name, custom = self.option_name()
                        self.expect("=")
                        option_value = self.constant()
                        if not custom:
                            set_option(value.options, name, option_value)
                        if not self.accept(","):
                            break
                    self.expect("]")
                self.expect(";")
        if not enum.value:
            raise self.error(f"enum {enum.name!r} has no values")

    def service(self, service: descriptor_pb2.ServiceDescriptorProto) -> None:
        service.name = self.identifier()
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(service.options)
                continue
            self.expect("rpc")
            method = service.method.add()
            method.name = self.identifier()
            self.expect("(")
            method.client_streaming = self.accept("stream")
            method.input_type = self.identifier()
            self.expect(")")
            self.expect("returns")
            self.expect("(")
            method.server_streaming = self.accept("stream")
            method.output_type = self.identifier()
            self.expect(")")
            if self.accept("{"):
                while not self.accept("}"):
                    if self.accept("option"):
                        self.option_statement(method.options)
                    else:
                        self.expect(";")
            else:
                self.expect(";")


def _default_text(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def set_option(options: Message, name: str, value: str | int | float | bool) -> None:
    """Set a standard option by name; unknown names and wrong value types are errors, like protoc."""
    field = options.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise ProtoSyntaxError(f"unknown option {name!r}")
    try:
        if field.enum_type is not None:
            number = field.enum_type.values_by_name.get(str(value))
            if number is None:
                raise ProtoSyntaxError(f"{value!r} is not a value of option {name!r}")
            setattr(options, name, number.number)
        else:
            setattr(options, name, value)
    except (TypeError, ValueError) as error:
        raise ProtoSyntaxError(f"option {name!r}: {error}") from error


def declared_types(file: FDP) -> dict[str, int]:
    """Every message and enum a file declares, by fully qualified name (leading dot)."""
    found: dict[str, int] = {}
    prefix = f".{file.package}" if file.package else ""

    def visit(messages: Iterable, enums: Iterable, scope: str) -> None:
        for enum in enums:
            found[f"{scope}.{enum.name}"] = FIELD.TYPE_ENUM
        for message in messages:
            name = f"{scope}.{message.name}"
            found[name] = FIELD.TYPE_MESSAGE
            visit(message.nested_type, message.enum_type, name)

    visit(file.message_type, file.enum_type, prefix)
    return found


def _resolve(name: str, scope: str, known: dict[str, int]) -> str | None:
    if name.startswith("."):
        return name if name in known else None
    first = name.split(".", 1)[0]
    parts = scope.split(".") if scope else [""]
    for end in range(len(parts), 0, -1):
        base = ".".join(parts[:end])
        if f"{base}.{first}" in known or any(key.startswith(f"{base}.{first}.") for key in known):
            candidate = f"{base}.{name}"
            return candidate if candidate in known else None
    return None


def parse_proto(text: str, dependencies: Iterable[FDP]) -> FDP:
    """Parse `.proto` text; `dependencies` are the descriptors of the files it imports."""
    parser = _Parser(text)
    file = parser.parse()
    known = declared_types(file)
    for dependency in dependencies:
        known.update(declared_types(dependency))
    for scope, field in parser.unresolved:
        for attribute in ("type_name", "extendee"):
            name = getattr(field, attribute)
            if not name or (attribute == "type_name" and field.HasField("type")):
                continue
            resolved = _resolve(name, scope, known)
            if resolved is None:
                raise ProtoSyntaxError(f"type {name!r} of field {field.name!r} is not defined")
            setattr(field, attribute, resolved)
            if attribute == "type_name":
                field.type = known[resolved]  # type: ignore[assignment]
    for service in file.service:
        for method in service.method:
            for attribute in ("input_type", "output_type"):
                resolved = _resolve(
                    getattr(method, attribute), f".{file.package}" if file.package else "", known
                )
                if resolved is None:
                    raise ProtoSyntaxError(
                        f"type {getattr(method, attribute)!r} of rpc {method.name!r} is not defined"
                    )
                setattr(method, attribute, resolved)
    return file


# -- printing


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return str(value)


def _option_items(options: Message, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    items = []
    for field, value in options.ListFields():
        if field.name in skip or field.is_extension or field.type == field.TYPE_MESSAGE:
            continue
        if field.is_repeated:
            continue
        if field.enum_type is not None:
            items.append((field.name, field.enum_type.values_by_number[value].name))
        else:
            items.append((field.name, _literal(value)))
    return items


def _ranges(ranges: Iterable, names: Iterable[str], *, exclusive_end: bool) -> list[str]:
    lines = []
    parts = []
    for entry in ranges:
        end = entry.end - 1 if exclusive_end else entry.end
        if end >= MAX_FIELD_NUMBER:
            parts.append(f"{entry.start} to max")
        else:
            parts.append(str(entry.start) if end == entry.start else f"{entry.start} to {end}")
    if parts:
        lines.append(f"reserved {', '.join(parts)};")
    if names:
        lines.append("reserved " + ", ".join(_literal(name) for name in names) + ";")
    return lines


class _Printer:
    def __init__(self, file: FDP) -> None:
        self.file = file
        self.lines: list[str] = []
        self.proto3 = file.syntax == "proto3"
        self.maps: dict[str, descriptor_pb2.DescriptorProto] = {}

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def print(self) -> str:
        file = self.file
        self.emit(0, f'syntax = "{"proto3" if self.proto3 else "proto2"}";')
        if file.package:
            self.emit(0, f"package {file.package};")
        if file.dependency:
            self.lines.append("")
            for index, path in enumerate(file.dependency):
                kind = (
                    "public "
                    if index in file.public_dependency
                    else "weak "
                    if index in file.weak_dependency
                    else ""
                )
                self.emit(0, f"import {kind}{_literal(path)};")
        options = _option_items(file.options)
        if options:
            self.lines.append("")
            for name, value in options:
                self.emit(0, f"option {name} = {value};")
        scope = f".{file.package}" if file.package else ""
        for message in file.message_type:
            self.lines.append("")
            self.message(message, 0, scope)
        for enum in file.enum_type:
            self.lines.append("")
            self.enum(enum, 0)
        for service in file.service:
            self.lines.append("")
            self.service(service)
        if file.extension:
            self.lines.append("")
            self.extensions(file.extension, 0)
        return "\n".join(self.lines) + "\n"

    def message(self, message: descriptor_pb2.DescriptorProto, depth: int, scope: str) -> None:
        name = f"{scope}.{message.name}"
        for nested in message.nested_type:
            if nested.options.map_entry:
                self.maps[f"{name}.{nested.name}"] = nested
        self.emit(depth, f"message {message.name} {{")
        for option, value in _option_items(message.options, skip=("map_entry",)):
            self.emit(depth + 1, f"option {option} = {value};")
        printed_oneofs: set[int] = set()
        for field in message.field:
            in_real_oneof = field.HasField("oneof_index") and not field.proto3_optional
            if in_real_oneof:
                if field.oneof_index in printed_oneofs:
                    continue
                printed_oneofs.add(field.oneof_index)
                declaration = message.oneof_decl[field.oneof_index]
                self.emit(depth + 1, f"oneof {declaration.name} {{")
                for option, value in _option_items(declaration.options):
                    self.emit(depth + 2, f"option {option} = {value};")
                for member in message.field:
                    if member.HasField("oneof_index") and member.oneof_index == field.oneof_index:
                        self.emit(depth + 2, self.field(member, in_oneof=True))
                self.emit(depth + 1, "}")
            else:
                self.emit(depth + 1, self.field(field, in_oneof=False))
        for nested in message.nested_type:
            if not nested.options.map_entry:
                self.message(nested, depth + 1, name)
        for enum in message.enum_type:
            self.enum(enum, depth + 1)
        for entry in message.extension_range:
            end = "max" if entry.end - 1 >= MAX_FIELD_NUMBER else str(entry.end - 1)
            self.emit(depth + 1, f"extensions {entry.start} to {end};")
        for line in _ranges(message.reserved_range, message.reserved_name, exclusive_end=True):
            self.emit(depth + 1, line)
        if message.extension:
            self.extensions(message.extension, depth + 1)
        self.emit(depth, "}")

    def type_of(self, field: descriptor_pb2.FieldDescriptorProto) -> str:
        if field.type_name:
            return field.type_name
        return SCALAR_NAMES[field.type]

    def field(self, field: descriptor_pb2.FieldDescriptorProto, *, in_oneof: bool) -> str:
        entry = self.maps.get(field.type_name) if field.label == FIELD.LABEL_REPEATED else None
        if entry is not None:
            key, value = entry.field[0], entry.field[1]
            declaration = f"map<{self.type_of(key)}, {self.type_of(value)}> {field.name} = {field.number}"
        else:
            label = ""
            if field.label == FIELD.LABEL_REPEATED:
                label = "repeated "
            elif field.label == FIELD.LABEL_REQUIRED:
                label = "required "
            elif not in_oneof and (not self.proto3 or field.proto3_optional):
                label = "optional "
            declaration = f"{label}{self.type_of(field)} {field.name} = {field.number}"
        options = []
        if field.HasField("default_value"):
            value = field.default_value
            quoted = field.type in (FIELD.TYPE_STRING, FIELD.TYPE_BYTES)
            options.append(("default", _literal(value) if quoted else value))
        if field.json_name and field.json_name != default_json_name(field.name):
            options.append(("json_name", _literal(field.json_name)))
        options.extend(_option_items(field.options))
        if options:
            declaration += " [" + ", ".join(f"{name} = {value}" for name, value in options) + "]"
        return declaration + ";"

    def enum(self, enum: descriptor_pb2.EnumDescriptorProto, depth: int) -> None:
        self.emit(depth, f"enum {enum.name} {{")
        for option, value in _option_items(enum.options):
            self.emit(depth + 1, f"option {option} = {value};")
        for value in enum.value:
            options = _option_items(value.options)
            suffix = " [" + ", ".join(f"{name} = {text}" for name, text in options) + "]" if options else ""
            self.emit(depth + 1, f"{value.name} = {value.number}{suffix};")
        for line in _ranges(enum.reserved_range, enum.reserved_name, exclusive_end=False):
            self.emit(depth + 1, line)
        self.emit(depth, "}")

    def service(self, service: descriptor_pb2.ServiceDescriptorProto) -> None:
        self.emit(0, f"service {service.name} {{")
        for method in service.method:
            request = ("stream " if method.client_streaming else "") + method.input_type
            response = ("stream " if method.server_streaming else "") + method.output_type
            self.emit(1, f"rpc {method.name}({request}) returns ({response});")
        self.emit(0, "}")

    def extensions(self, fields: Iterable[descriptor_pb2.FieldDescriptorProto], depth: int) -> None:
        by_extendee: dict[str, list] = {}
        for field in fields:
            by_extendee.setdefault(field.extendee, []).append(field)
        for extendee, members in by_extendee.items():
            self.emit(depth, f"extend {extendee} {{")
            for field in members:
                self.emit(depth + 1, self.field(field, in_oneof=False))
            self.emit(depth, "}")


def print_proto(file: FDP) -> str:
    return _Printer(file).print()
