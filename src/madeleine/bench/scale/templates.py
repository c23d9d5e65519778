"""Word pools and templates for the synthetic user: pure data, kept apart from the generator."""

from __future__ import annotations

# -- vocabularies ---------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split("|") if w.strip())


def _pairs(firsts: str, seconds: str) -> tuple[str, ...]:
    """Every "first second" name, for pools like restaurants ("Casa" × "Lola")."""
    return tuple(f"{a} {b}" for a in _words(firsts) for b in _words(seconds))


VOCAB: dict[str, tuple[str, ...]] = {
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
    "restaurant": _pairs(
        "Casa|The Copper|Blue|Little|Golden|Old|Saint|Green|Red|Silver|Wild|Tiny",
        "Lola|Pot|Lotus|Fig|Harbour|Lantern|Olive|Spoon|Kettle|Tiger|Pearl|Table",
    ),
    "hotel": _pairs(
        "Hotel|Grand|Casa|Villa|Park|Harbour|Old Town|Riverside",
        "Astoria|Miramar|Lumen|Nordic|Central|Belvedere|Azul|Meridian|Aurora",
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
    "book": _pairs(
        "The Silent|A Winter|The Last|Small|The Glass|Ten|The Salt|Paper",
        "Harbour|Orchard|Library|Fires|Gardens|Letters|Cities|Mountain|Sea",
    ),
    "show": _pairs(
        "Midnight|Northern|Broken|Hidden|Crown|Borrowed|Velvet|Quiet",
        "Signals|Lights|Line|Valley|Station|Time|Empire|Creek",
    ),
    "band": _pairs(
        "The Paper|Neon|Glass|Velvet|Polar|Electric|Honey|Lunar",
        "Kites|Tigers|Owls|Choir|Harbour|Machines|Foxes|Rivers",
    ),
    "street": _pairs(
        "Elm|Harbour|Mill|Station|Church|Park|Bridge|Linden|Chestnut|King|Queen|Market",
        "Street|Road|Lane|Avenue",
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

# -- templates: (user lines, assistant lines) per topic -------------------------------------------

TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
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
TOPIC_WEIGHTS = {
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
SMALL_TALK: tuple[tuple[str, str], ...] = tuple(
    [("user", t) for t in _words("ok thanks!|sounds good|haha yes|perfect, do that|hmm, not sure")]
    + [("user", t) for t in _words("let me think about it|yes please|no, the other one|that works")]
    + [("assistant", t) for t in _words("You're welcome!|Done.|Got it.|Anything else?|Noted.")]
)
OPENERS = _words(
    "Oh, |By the way, |Quick update: |Honestly, |So, |Also, |Hey, |Random thought: |Ugh, |"
    "Good news: |Okay so |Update: "
)
DETAILS = (
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
CLOSERS = _words("What do you think?|Thoughts?|Can you remind me later?|Let me know.|No rush.")

# Planted facts: (statement, question). The statement is one user turn; the question should
# bring it back in the top 10 (a sanity check that retrieval still works at scale).
PLANTED: tuple[tuple[str, str], ...] = (
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
QUERIES: tuple[str, ...] = (
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
