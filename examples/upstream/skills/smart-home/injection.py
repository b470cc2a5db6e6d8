"""What the smart-home skill adds to the runtime when it is activated: device controls."""

from cave_tui.runtime import Function

devices = {
    "living_room_light": {"type": "light", "state": "off", "brightness": 0},
    "bedroom_light": {"type": "light", "state": "off", "brightness": 0},
    "kitchen_light": {"type": "light", "state": "on", "brightness": 80},
    "tv": {"type": "tv", "state": "off", "channel": 5, "volume": 30},
    "front_door": {"type": "door", "state": "locked"},
    "garage_door": {"type": "door", "state": "unlocked"},
}


def _device(device_id: str, kind: str) -> dict:
    device = devices.get(device_id)
    if device is None:
        raise KeyError(f"no device {device_id!r}; devices: {', '.join(devices)}")
    if device["type"] != kind:
        raise ValueError(f"{device_id!r} is a {device['type']}, not a {kind}")
    return device


def get_status(device_id: str | None = None) -> dict:
    """The state of one device, or of every device (by id) when device_id is None."""
    if device_id is None:
        return {name: dict(state) for name, state in devices.items()}
    if device_id not in devices:
        raise KeyError(f"no device {device_id!r}; devices: {', '.join(devices)}")
    return {"device_id": device_id, **devices[device_id]}


def set_light(device_id: str, state: str, brightness: int = 100) -> dict:
    """Turn a light "on" (at brightness 0-100) or "off"; returns its new state."""
    light = _device(device_id, "light")
    light["state"] = state
    light["brightness"] = max(0, min(100, brightness)) if state == "on" else 0
    return {"device_id": device_id, **light}


def set_door(device_id: str, state: str) -> dict:
    """Set a door to "locked" or "unlocked"; returns its new state."""
    door = _device(device_id, "door")
    door["state"] = state
    return {"device_id": device_id, **door}


def set_tv(state: str, channel: int | None = None, volume: int | None = None) -> dict:
    """Turn the TV "on" or "off"; when on, optionally set its channel and volume."""
    tv = _device("tv", "tv")
    tv["state"] = state
    if state == "on":
        if channel is not None:
            tv["channel"] = channel
        if volume is not None:
            tv["volume"] = volume
    return {"device_id": "tv", **tv}


__exports__ = [
    Function(get_status, description="Current state of one device or all devices"),
    Function(set_light, description="Turn a light on or off and set its brightness"),
    Function(set_door, description="Lock or unlock a door"),
    Function(set_tv, description="Control the TV's power, channel and volume"),
]
