"""firejail as a sandbox (``--isolation firejail``).

No profile, no network, all capabilities dropped, seccomp, no new privileges; a private /tmp
(``--private-tmp``) and a new /dev of the usual devices whose /dev/shm is private
(``--private-dev``: no /dev/kvm, no GPU compute devices, no /dev/mqueue); firejail's default
already gives a private /var/tmp.
"""

from __future__ import annotations

from benchlab.measure.sandboxes import Sandbox, kept_dirs

FIREJAIL_ARGS = ("--quiet", "--noprofile", "--net=none", "--caps.drop=all", "--seccomp",
                 "--nonewprivs", "--private-tmp", "--private-dev")


class Firejail(Sandbox):
    """firejail: no profile, no network, no capabilities, private temporary directories."""

    name = "firejail"
    missing = ("firejail is not installed here; apt-get install firejail, or choose another "
               "--isolation")

    def argv(self, argv: list[str], *, worker: int, meta_path: str | None,
             keep: tuple[str, ...]) -> list[str]:
        """``firejail`` with :data:`FIREJAIL_ARGS`, each kept directory whitelisted."""
        # firejail would start the program in the user's home when its working directory is
        # hidden by the private /tmp; a whitelisted path stays, the rest of /tmp is new
        kept = [f"--whitelist={d}" for d in kept_dirs(keep, ("/tmp",))]
        return ["firejail", *FIREJAIL_ARGS, *kept, "--", *argv]


SANDBOX = Firejail()
