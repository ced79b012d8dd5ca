"""snappi with its version check on (otg-examples' RFC 2544 fixture): the first call checks the
server's API version against snappi's own; a mismatch would raise. Prints the version the
server gave and the configuration it holds.

    version_check.py URL"""
import sys

import common

api = common.api(sys.argv[1])
config = api.get_config()  # the version check runs first
v = api.get_version()
common.done({"api_spec_version": v.api_spec_version, "sdk_version": v.sdk_version,
             "config": config.serialize(config.DICT)})
