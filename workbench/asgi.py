import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
application = get_asgi_application()

from workbench.startup import refuse_to_start_on_errors  # noqa: E402 - needs Django set up

refuse_to_start_on_errors("The web server")
