# The image carries the LDAP extra (requirements-ldap.lock: the default lock plus python-ldap and
# django-auth-ldap). Wheels are built in a stage of their own: python-ldap has no wheel and
# compiles against the OpenLDAP and SASL headers, which the final image does not need (only their
# libraries).
FROM python:3.12-slim-bookworm AS wheels
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev libldap2-dev libsasl2-dev \
    && rm -rf /var/lib/apt/lists/*
COPY requirements-ldap.lock /tmp/requirements-ldap.lock
RUN pip wheel --no-cache-dir --wheel-dir /wheels -r /tmp/requirements-ldap.lock

FROM python:3.12-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends \
        gettext fonts-noto-cjk fonts-dejavu-core libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 poppler-utils \
        libldap-2.5-0 libsasl2-2 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements-ldap.lock ./
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels -r requirements-ldap.lock
COPY . .
# Static files are collected as production serves them: hashed names and their manifest. The
# two variables only let the settings load; the real ones come at run time.
RUN pip install --no-cache-dir --no-deps -e . \
    && DJANGO_ENV=production SECRET_KEY=collectstatic-only ALLOWED_HOSTS=build python manage.py collectstatic --noinput
RUN useradd --system --uid 999 --user-group --home /app workbench && mkdir -p /app/var && chown -R workbench /app/var
USER workbench
EXPOSE 8000
# Health: /healthz/ (alive) and /readyz/ (can serve); compose probes /readyz/.
CMD ["sh", "-c", "gunicorn workbench.wsgi --bind 0.0.0.0:${PORT:-8000} --workers 3"]
