import re

from django.core.exceptions import ValidationError

# A service account's name is its Kafka principal (`User:<name>`) and its SCRAM user name, so it keeps to
# characters that need no escaping in SCRAM (no ',' or '=') nor in ACL principals (no ':').
SERVICE_ACCOUNT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SERVICE_ACCOUNT_NAME_RULE = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit."


def validate_service_account_name(name: str) -> None:
    if SERVICE_ACCOUNT_NAME.fullmatch(name) is None:
        raise ValidationError(SERVICE_ACCOUNT_NAME_RULE, code="invalid_name")
