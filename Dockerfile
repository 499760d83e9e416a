# One image for every Python process of the product: web, Celery worker/beat and broker nodes.
FROM node:20-bookworm-slim AS console
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# Apache Kafka's jars from Maven Central (the apache-kafka engine), laid out by the same pom bootstrap.sh uses.
FROM maven:3.9-eclipse-temurin-17 AS apache-kafka
WORKDIR /src
COPY jvm/apache-kafka/pom.xml jvm/apache-kafka/pom.xml
RUN mvn -q -B -f jvm/apache-kafka/pom.xml package

FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 STREAMHUB_DATA_DIR=/data APACHE_KAFKA_HOME=/opt/apache-kafka
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/* && useradd --create-home --uid 1000 streamhub
WORKDIR /app
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
COPY --from=console /src/frontend/dist ./frontend/dist
COPY --from=apache-kafka /src/.cache/apache-kafka /opt/apache-kafka
RUN DJANGO_SETTINGS_MODULE=console.settings SECRET_KEY=build-only python manage.py collectstatic --noinput -v 0 \
    && mkdir -p /data && chown streamhub /data
USER streamhub
EXPOSE 8000 9092
CMD ["granian", "--interface", "wsgi", "console.wsgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "3", "--blocking-threads", "4", "--access-log"]
