"""What the official Python `mcp` SDK logs at WARNING or above, kept so a check can say it
heard nothing: a server that answers as the SDK expects gives it nothing to warn about. (A
`202` to a session's `DELETE`, for one, made it log `Session termination failed: 202` at the
end of every HTTP session.)
"""

import logging


class Heard(logging.Handler):
    """The SDK's warnings, as `logger: message` lines."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.name}: {record.getMessage()}")


def listen():
    """Starts keeping what the SDK's loggers (`mcp` and below) warn of."""
    heard = Heard()
    logging.getLogger("mcp").addHandler(heard)
    return heard
