"""Deactivation, however it happens, ends the account's sessions and API tokens at once.

The admin, `manage.py deactivate_user` and the directory backend call
`evaluations.services.user_deactivate`. These receivers catch any other save that turns
`is_active` off (a shell, a library) and hand it to the same service.
"""

from typing import Any

from django.contrib.auth.models import User
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver


@receiver(pre_save, sender=User)
def _note_deactivation(sender: type[User], instance: User, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if kwargs.get("raw") or instance.pk is None or instance.is_active:
        return
    if update_fields is not None and "is_active" not in update_fields:
        return
    was_active = User.objects.filter(pk=instance.pk, is_active=True).exists()
    instance._workbench_deactivated = was_active  # type: ignore[attr-defined]


@receiver(post_save, sender=User)
def _withdraw_access(sender: type[User], instance: User, **kwargs: Any) -> None:
    if not getattr(instance, "_workbench_deactivated", False):
        return
    instance._workbench_deactivated = False  # type: ignore[attr-defined]
    from evaluations.services import user_deactivated

    user_deactivated(user=instance, actor=None, reason="account made inactive")
