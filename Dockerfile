# hamisim container image, for machines with Docker or BuildKit. The image the project builds
# and tests is made without Docker by scripts/build-image.sh (mmdebstrap + umoci, smoke-tested by
# scripts/smoke-image.sh; docs/deploy.md "Image"); this file makes the same layout:
#   /opt/hamisim/bin/hamisim     entry point, no file capabilities
#   /opt/hamisim/bin/scheduler   a copy with cap_net_bind_service=+ep, for HAMi's chart
#                                (`command: [scheduler, --http_bind=0.0.0.0:443, ...]`)
#   PATH=/opt/hamisim/bin:...    USER 65532:65532, nothing written at run time
# It differs in its base: debian:12-slim (with a shell, dpkg and apt) instead of only the
# packages hamisim's libraries come from.
#   docker build -t ghcr.io/hamisim/hamisim:0.1.0 .
#   docker run --rm ghcr.io/hamisim/hamisim:0.1.0 --help

# ---- build ------------------------------------------------------------------------------
FROM debian:12 AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# The same package list as everywhere else (README, CI).
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DHAMISIM_TESTS=OFF -DHAMISIM_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/opt/hamisim \
 && cmake --build /build --target hamisim \
 && cmake --install /build --strip

# ---- runtime ----------------------------------------------------------------------------
FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /opt/hamisim /opt/hamisim
# Only the shared libraries hamisim links (OpenSSL 3, yaml-cpp, spdlog/fmt, Boost.JSON,
# simdjson, RE2). setcap runs in this stage: a capability set in the build stage may not survive
# COPY --from. libcap2-bin goes again afterwards.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      ca-certificates libssl3 libyaml-cpp0.7 libspdlog1.10 libfmt9 libboost-json1.81.0 \
      libsimdjson14 libre2-9 libcap2-bin \
 && cp /opt/hamisim/bin/hamisim /opt/hamisim/bin/scheduler \
 && setcap cap_net_bind_service=+ep /opt/hamisim/bin/scheduler \
 && apt-get purge -y -qq libcap2-bin && apt-get autoremove -y -qq \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 hamisim \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin hamisim
ENV PATH=/opt/hamisim/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER 65532:65532
EXPOSE 443 8443 9395
ENTRYPOINT ["/opt/hamisim/bin/hamisim"]
CMD ["--help"]
