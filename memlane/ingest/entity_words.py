"""The word lists the offline entity finder (memlane.ingest.entities) decides with: well-known
tools, organizations, places and first names, the words that mark a kind ("GmbH", "-straße",
"Hotel"), and the words that are never a name (weekdays, months, units, link schemes).

Lists rather than a model: no maintained package ships an entity model that loads offline within
memlane's install budget. Each list holds names a person anywhere meets (not the names of any one
data set); a name missing from them is still found by its shape and kind-decided by MiniLM.
"""

from __future__ import annotations


def _lower_set(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in text.split())


def _by_lower(text: str) -> dict[str, str]:
    return {word.lower(): word for word in text.split()}


def _phrases(text: str) -> dict[str, str]:
    """`|`-separated multi-word names, by lower case."""
    return {p.strip().lower(): p.strip() for p in text.split("|") if p.strip()}


KNOWN_TOOLS = _by_lower("""Python JavaScript TypeScript Java Kotlin Swift Rust Go Golang Ruby PHP Perl Scala
    Haskell Elixir Erlang Clojure Lua Julia Fortran COBOL SQL PostgreSQL Postgres MySQL MariaDB SQLite MongoDB Redis
    Cassandra DynamoDB Elasticsearch OpenSearch Kafka RabbitMQ Docker Kubernetes Helm Terraform Ansible Jenkins GitHub
    GitLab Bitbucket Git Linux Ubuntu Debian Fedora Windows macOS iOS Android React Vue Angular Svelte Django Flask
    FastAPI Rails Spring Node.js Deno npm pip Poetry pytest NumPy pandas PyTorch TensorFlow Jupyter VSCode Vim Emacs
    Excel Word PowerPoint Figma Notion Slack Jira Confluence Trello Asana Zoom Teams Gmail Outlook Chrome Firefox
    Safari AWS Lambda S3 EC2 Azure GCP BigQuery Snowflake Airflow Dagster Spark Hadoop Grafana Prometheus Datadog
    Sentry Opsgenie PagerDuty Nginx Apache Bash Zsh Markdown JSON YAML GraphQL REST gRPC OAuth Stripe Shopify
    WordPress Photoshop Blender Unity Unreal LaTeX Obsidian Dropbox MiniLM ONNX Pinecone Qdrant Weaviate Milvus
    pgvector FAISS Chroma LangChain OpenAPI Vite Webpack Tailwind Bootstrap Playwright Selenium Cypress Postman
    Homebrew WhatsApp Telegram Signal Superset Metabase Tableau Looker dbt Heroku Vercel Netlify Patroni PgBouncer
    certbot WireGuard OpenVPN Tailscale 1Password Bitwarden KeePass iCloud OneDrive Kindle iPhone iPad MacBook
    ThinkPad Spotify Duolingo Splitwise PayPal Venmo Doctolib Personio Workday SAP Salesforce HubSpot Zendesk
    Pretalx Miro Loom Canva Calendly Pi-hole Raspberry Prophet Kibana Logstash Consul Vault Nomad Podman Vagrant
    Alembic Pydantic SQLAlchemy Celery Gunicorn Uvicorn Starlette Jinja Sphinx Cargo Gradle Maven Bazel
    FritzBox Fritz!Box Mastodon Discord Skype Instagram Facebook YouTube Netflix TikTok Uber""")
# Names of several words, each a tool ("Google Drive") or an organization ("Deutsche Bahn") or a place.
KNOWN_TOOL_PHRASES = _phrases("""Google Drive | Google Docs | Google Sheets | Google Meet | Google Maps |
    Home Assistant | Raspberry Pi | VS Code | Visual Studio Code | AWS Lambda | Microsoft Teams | Apple Music |
    Final Cut | Power BI""")
KNOWN_ORGS = _by_lower("""Google Microsoft Apple Amazon Meta OpenAI Anthropic Mozilla IBM Intel AMD Nvidia
    Spotify Airbnb Tesla NASA UNICEF UNESCO WHO NATO IKEA Samsung Sony LG Dell HP Lenovo Oracle Adobe Twitter
    LinkedIn Wikipedia Reddit Cloudflare DigitalOcean Hetzner OVH Backblaze HSBC Barclays Lufthansa Ryanair EasyJet
    Airbus Boeing Siemens Bosch Deloitte KPMG McKinsey Accenture Vodafone Telekom Lidl Aldi Rewe Edeka Zalando
    MediaMarkt Saturn DHL Hermes UPS FedEx Allianz AXA ERGO Sparkasse N26 Revolut Wise Volkswagen BMW Audi Volvo
    Toyota Renault Nestlé Unilever Deutsche IKEA Carrefour Tesco Sainsbury's Allegro Vinted Booking.com Expedia""")
KNOWN_ORG_PHRASES = _phrases("""Deutsche Bahn | Deutsche Bank | Deutsche Telekom | Deutsche Post | Trade Republic |
    Red Cross | Let's Encrypt | Société Générale | Banco Santander | European Union | United Nations |
    Techniker Krankenkasse | Deutsche Glasfaser""")
KNOWN_PLACES = _by_lower("""London Paris Berlin Madrid Rome Lisbon Lisboa Porto Dublin Amsterdam Rotterdam Brussels
    Vienna Wien Prague Praha Warsaw Warszawa Kraków Krakow Łódź Gdańsk Wrocław Poznań Budapest Zurich Zürich Geneva
    Munich München Hamburg Cologne Köln Frankfurt Stuttgart Leipzig Dresden Hannover Bremen Düsseldorf Nuremberg
    Nürnberg Milan Milano Barcelona Valencia Sevilla Seville Málaga Bilbao Stockholm Oslo Copenhagen Helsinki Athens
    Istanbul İstanbul Ankara Izmir İzmir Moscow Kyiv Tokyo Osaka Kyoto Seoul Beijing Shanghai Singapore Sydney
    Melbourne Auckland Toronto Vancouver Montreal Boston Chicago Seattle Portland Denver Austin Dallas Houston Miami
    Atlanta Brooklyn Manhattan California Texas Florida Oregon Colorado Hawaii Alaska Mexico Brazil Argentina Chile
    Peru Canada France Germany Deutschland Spain Italy Portugal Ireland England Scotland Wales Britain UK USA US
    America Europe Asia Africa Australia Japan China India Korea Sweden Norway Denmark Finland Iceland Netherlands
    Belgium Switzerland Austria Poland Greece Turkey Türkiye Egypt Morocco Kenya Nigeria Thailand Vietnam Indonesia
    Philippines Nepal Bali Alps Yosemite Tahoe Bavaria Bayern Tyrol Tirol Provence Tuscany Andalusia Catalonia
    Brandenburg Mecklenburg Saxony Sachsen Coimbra Aveiro Faro Sintra Orléans Lyon Marseille Nice Bordeaux Toulouse
    Strasbourg Lille Nantes Salzburg Innsbruck Graz Basel Bern Lausanne Luxembourg Malta Cyprus Crete Mallorca""")
KNOWN_PLACE_PHRASES = _phrases("""New York | San Francisco | Los Angeles | São Paulo | Rio de Janeiro | Buenos Aires |
    Mexico City | Hong Kong | Tel Aviv | Cape Town | New Zealand | South Africa | United Kingdom | United States |
    Black Forest | Lake Como | Mount Fuji""")
# Lower-case words that are a tool only when written as the tool writes itself ("go", "word", "spring").
AMBIGUOUS_LOWER = _lower_set("""go word teams zoom spring rails signal unity swift apache chrome safari excel
    notion slack lambda spark chroma helm poetry vim rest pip npm prophet vault consul nomad raspberry meta wise
    saturn hermes deutsche""")
FIRST_NAMES = _lower_set("""james john robert michael william david richard joseph thomas charles christopher daniel
    matthew anthony mark paul steven andrew joshua kevin brian george timothy ronald jason edward jeffrey ryan
    jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel frank gregory raymond
    alexander patrick jack dennis jerry tyler aaron jose adam henry nathan peter zachary kyle noah ethan liam
    lucas oliver mary patricia jennifer linda elizabeth barbara susan jessica sarah karen nancy lisa betty
    margaret sandra ashley kimberly emily donna michelle dorothy carol amanda melissa deborah stephanie rebecca
    sharon laura cynthia kathleen amy angela shirley anna brenda pamela emma nicole helen samantha katherine
    christine debra rachel carolyn janet catherine maria heather diane ruth julie olivia joyce virginia victoria
    kelly lauren christina joan evelyn judith megan andrea cheryl hannah jacqueline martha gloria teresa ann sara
    madison frances kathryn janice jean abigail alice judy sophia grace denise amber doris marilyn danielle
    beverly isabella theresa diana natalie brittany charlotte marie kayla alexis lori caroline melanie ana
    carlos juan luis miguel sofia lucia lucía mateo hugo elena marta pablo javier priya raj arjun wei li chen yuki
    hiroshi kenji aisha fatima omar ali mohammed ahmed tom tim ben sam alex max jon dan joe bob bill jim mike
    nick chris kate katie jane jenny meg sue lily leo finn ava mia zoe ella chloe ivy ines inês nora greta
    jonas lukas leon felix paul lena lea mila clara ole nele mats henrik birgit sabine annette malte jana jan
    jürgen uwe klaus dieter helga ursula petra monika sandra stefan tobias florian sebastian julia katharina
    tomasz piotr paweł krzysztof wojciech bartek bartosz zofia wiktoria agnieszka katarzyna małgorzata olga
    joão pedro rui tiago inês beatriz fernanda gonçalo mariana francisco antónio lucas rafael diego sergio
    alejandro josé maría carmen lucía pilar rosa isabel françois pierre jacques hélène élodie amélie chloé
    mehmet mustafa ayşe fatma emine zeynep elif aylin şule çağan can deniz emre burak kemal gülşen yusuf
    kofi kwame chidi ngozi amara tunde sipho thabo dana marco erik lars anders ingrid astrid sven björn""")

# Words that say what kind a span is when they end it ("Acme Inc", "Baker Street") or open it
# ("Hotel Rathaus", "University of Leeds").
ORG_SUFFIXES = _lower_set("""Inc Ltd LLC GmbH AG SA SE plc Corp Corporation Company Co KG eV e.V. Bank University
    College Institute Foundation Agency Council Ministry Hospital Clinic School Group Lab Labs Society Association
    Partners Studio Studios Insurance Airline Airlines Consulting Technologies Systems Boulderhalle Centre Center""")
ORG_PREFIXES = _lower_set("""Hotel Praxis Salon Pension Hundepension Schlüsseldienst Bürgeramt Finanzamt Standesamt
    Zahnarztpraxis Tierarztpraxis Kleintierzentrum Töpferei Bäckerei Restaurant Café Cafe Instituto Institut
    Université Universidad Universität Société Sociedad Banco Museum Museo Musée VHS Fahrerlaubnisbehörde Reifen
    Sport Pierogarnia Casa Studio Bank University Autohaus Apotheke Kanzlei""")
# German compounds end in the kind's word: "Kleintierzentrum", "Zahnarztpraxis", "Bürgeramt".
ORG_ENDINGS = ("praxis", "amt", "behörde", "zentrum", "pension", "dienst", "halle", "versicherung", "kasse")
PLACE_SUFFIXES = _lower_set("""Street St Road Rd Avenue Ave Lane Boulevard Square Park Lake River Mountain Mountains
    Beach Bay Island Islands Valley Canyon Airport Station County City Province Coast Palace Castle Bridge Tor Damm
    Platz Allee Ufer Weg Gasse Ring Hill Harbour Harbor""")
PLACE_PREFIXES = _lower_set("""Rua Rue Calle Avenida Via Piazza Plaza Praça Ulica Flughafen Gut Lake Mount Bahnhof""")
# Street names written as one word: "Weserstraße", "Blaschkoallee", "Hermannplatz", "Maybachufer".
PLACE_ENDINGS = ("straße", "strasse", "str.", "allee", "platz", "damm", "ufer", "gasse", "weg", "chaussee",
                 "markt", "brücke", "kiez")

TITLES = _lower_set("""Dr Mr Mrs Ms Mx Prof Sir Dame Aunt Uncle Grandma Grandpa Frau Herr Señora Señor Sra Sr
    Madame Mme Monsieur Pan Pani Dona Dom Senhora Senhor""")
PERSON_ROLES = _lower_set("""therapist teacher host plumber dentist doctor manager boss colleague neighbour neighbor
    friend sister brother son daughter mother father wife husband partner cousin""")

_WEEKDAYS = """Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun"""
_MONTHS = """January February March April May June July August September October November December Jan Feb Mar Apr
    Jun Jul Aug Sep Sept Oct Nov Dec"""
# Never a name, whatever the case: weekdays and months (and their plurals), units, link schemes and
# the words a sentence or a list item opens with.
NEVER = _lower_set(f"""{_WEEKDAYS} {_MONTHS} {" ".join(w + "s" for w in _WEEKDAYS.split())}
    Today Tomorrow Yesterday Tonight Weekend Morning Evening Christmas Easter Halloween Thanksgiving Ramadan
    Diwali Hanukkah
    GHz MHz kHz Hz Mbps Gbps Kbps Mbit Gbit kbit kWh kW MW GB MB KB TB GiB MiB kg km cm mm ml RAM CPU GPU SSD HDD
    USB USB-C HDMI
    javascript vbscript data mailto http https ftp file www
    I I'm I've I'd I'll The A An This That These Those My Our Your Their His Her Its We You He She They It There Here
    Then When Where What Why How Who Which If But And Or So Also Yes No Not Note Notes Todo TODO Hi Hello Dear Thanks
    Thank Please OK Okay Mr Mrs Ms Dr Prof Sir Step Phase Part Chapter Section Figure Table Appendix Summary Overview
    Introduction Conclusion Key Important Warning Tip Done Next Last First Second Third Total Re Fwd Subject
    From To Cc Q FAQ LGBTQ LGBTQ+ English French German Spanish Italian Chinese Japanese American British European
    Turkish Polish Portuguese Dutch Vietnamese Thai Korean Indian Greek Russian Swedish Danish Norwegian
    Mom Mum Mama Dad Papa Grandma Grandpa Box System Team Office Room Floor Plan Project Model Password
    True False None Null""")
