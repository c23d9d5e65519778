"""Software vocabulary for project facts: technologies with the topic a decision about them
settles ("JWT" → auth, "Postgres" → database), environments, and how they are spelled."""

from __future__ import annotations

from madeleine.facts.rules.tables import table

# canonical technology name: aliases (lower case)
TECH_NAMES = table(
    """PostgreSQL: postgres, postgresql, pg, psql; MySQL: mysql; MariaDB: mariadb;
    SQLite: sqlite, sqlite3; MongoDB: mongo, mongodb; Redis: redis; Valkey: valkey;
    Elasticsearch: elasticsearch, elastic; OpenSearch: opensearch; Kafka: kafka;
    RabbitMQ: rabbitmq; Python: python, python3, cpython; Node.js: node, nodejs, node.js;
    Deno: deno; Bun: bun; Go: golang; Rust: rust; Java: java, jdk; Kotlin: kotlin;
    TypeScript: typescript, ts; Ruby: ruby; Rails: rails, ruby on rails; PHP: php;
    Django: django; Flask: flask; FastAPI: fastapi; React: react, reactjs; Vue: vue, vuejs;
    Next.js: next, nextjs, next.js; Angular: angular; Svelte: svelte; Spring: spring,
    spring boot; .NET: .net, dotnet; Ubuntu: ubuntu; Debian: debian; Alpine: alpine;
    Kubernetes: kubernetes, k8s; Docker: docker; Terraform: terraform; Nginx: nginx;
    pgvector: pgvector; Celery: celery; Pydantic: pydantic; pytest: pytest; Poetry: poetry;
    uv: uv; npm: npm; pnpm: pnpm; Yarn: yarn; Webpack: webpack; Vite: vite;
    Tailwind: tailwind, tailwindcss; GraphQL: graphql; gRPC: grpc; REST: rest;
    JWT: jwt, json web tokens, json web token; OAuth: oauth, oauth2; SAML: saml;
    AWS: aws, amazon web services; GCP: gcp, google cloud; Azure: azure; Heroku: heroku;
    Fly.io: fly.io, fly; Vercel: vercel; Netlify: netlify; Cloudflare: cloudflare;
    GitHub Actions: github actions; GitLab CI: gitlab ci; CircleCI: circleci;
    Jenkins: jenkins; Sentry: sentry; Datadog: datadog; Prometheus: prometheus;
    Grafana: grafana; SQLAlchemy: sqlalchemy; Alembic: alembic; Prisma: prisma;
    ruff: ruff; mypy: mypy; Black: black; ESLint: eslint; Prettier: prettier;
    Stripe: stripe; S3: s3; Lambda: lambda; ECS: ecs; EKS: eks; Cassandra: cassandra;
    DynamoDB: dynamodb; Supabase: supabase; Firebase: firebase; Auth0: auth0;
    Keycloak: keycloak; sessions: session cookies, server-side sessions, sessions"""
)
# what a decision about a technology settles
TECH_TOPICS = table(
    """database: PostgreSQL, MySQL, MariaDB, SQLite, MongoDB, Cassandra, DynamoDB, Supabase;
    cache: Redis, Valkey; search: Elasticsearch, OpenSearch; queue: Kafka, RabbitMQ, Celery;
    auth: JWT, OAuth, SAML, Auth0, Keycloak, sessions; language: Python, Go, Rust, Java,
    Kotlin, TypeScript, Ruby, PHP; runtime: Node.js, Deno, Bun; framework: Django, Flask,
    FastAPI, Rails, Spring, .NET; frontend: React, Vue, Next.js, Angular, Svelte;
    hosting: AWS, GCP, Azure, Heroku, Fly.io, Vercel, Netlify, Cloudflare;
    orchestration: Kubernetes, Docker; ci: GitHub Actions, GitLab CI, CircleCI, Jenkins;
    monitoring: Sentry, Datadog, Prometheus, Grafana; orm: SQLAlchemy, Prisma;
    migrations: Alembic; packaging: Poetry, uv, npm, pnpm, Yarn; bundler: Webpack, Vite;
    styling: Tailwind; api: GraphQL, gRPC, REST; linting: ruff, ESLint, Black, Prettier;
    type_checking: mypy; testing: pytest; os: Ubuntu, Debian, Alpine""",
    canonical_is_alias=False,
)
# environment words -> canonical environment
ENVIRONMENTS = table(
    """prod: prod, production, live, 프로덕션, 운영, 운영 환경, 운영환경; staging: staging, stage,
    스테이징; dev: dev, development, local, locally, 개발, 개발 환경, 로컬; ci: ci, 씨아이;
    test: test, testing, tests, 테스트"""
)


def tech_name(raw: str) -> str | None:
    """The canonical name of a technology as written, or None when it is not one we know."""
    return TECH_NAMES.get(raw.strip().lower())


def tech_topic(name: str) -> str | None:
    return TECH_TOPICS.get(name.lower())
